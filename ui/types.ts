/** The daemon's wire shapes the dashboard reads (openapi.yaml is the reference). */

export type ServerStatus = 'connecting' | 'connected' | 'reconnecting' | 'disconnected' | 'needs_auth' | 'failed';

export interface ErrorInfo {
  code: string;
  message: string;
}

export interface ServerSnapshot {
  name: string;
  status: ServerStatus;
  transport: string;
  toolCount: number;
  promptCount: number;
  resourceCount: number;
  heldToolCount: number;
  lastError: ErrorInfo | null;
  connectedSince: string | null;
  protocol: { era: 'legacy' | 'modern'; version: string | null } | null;
  pid: number | null;
  nextRetryAt: string | null;
}

export interface StatusBody {
  state: string;
  version: string;
  servers: ServerSnapshot[];
}

/** One event of `/events`: `{seq, ts, type, …}`. */
export interface FeedEvent {
  seq: number;
  ts: string;
  type: string;
  server?: string | null;
  [field: string]: unknown;
}

export interface HelloEvent extends FeedEvent {
  type: 'hello';
  servers: ServerSnapshot[];
}

export interface CallFinished extends FeedEvent {
  type: 'call.finished';
  server: string;
  name: string;
  outcome: string;
  durationMs: number;
}

export interface ToolSummary {
  name: string;
  server: string;
  title?: string;
  description: string;
  score?: number;
}

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
}

export interface ToolDetail extends ToolSummary {
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: Record<string, unknown>;
}

export interface ContentItem {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri: string; mimeType?: string; text?: string; blob?: string };
}

export interface CallResult {
  content?: ContentItem[];
  structuredContent?: unknown;
  isError?: boolean;
}
