/**
 * The daemon's wire shapes the dashboard reads (openapi.yaml is the reference), imported
 * type-only from the src modules that declare them: the bundler erases them, so the dashboard
 * carries no daemon code (test/unit/ui-bundle.test.ts checks). A shape kept here is one src does
 * not name, or a wire form of one (a time as ISO text), and says which.
 */
import type { ReplicaInfo } from '../src/cluster/replica-heartbeats.js';
import type { ClusterTraffic } from '../src/cluster/replica-traffic.js';
import type { ErrorInfo } from '../src/errors.js';
import type { CallFinishedEvent, ServerStatus } from '../src/events/daemon-events.js';
import type { StampedEvent } from '../src/events/event-bus.js';
import type { HelloEvent } from '../src/http/ws/event-hub.js';
import type { RuntimeState } from '../src/runtime/runtime.js';
import type { AuditEntry } from '../src/store/ports.js';
import type { SearchStatsSnapshot } from '../src/gateway/lists/search-stats.js';
import type { AgentInfo } from '../src/gateway/agents/agent-types.js';
import type { BudgetStatus } from '../src/gateway/agents/agent-budgets.js';
import type { PendingApproval } from '../src/gateway/approvals/approval-types.js';
import type { ProgressData } from '../src/http/streaming/progress-data.js';
import type { HeldToolView } from '../src/upstream/catalogue/tool-pins.js';
import type { ImpactRow } from '../src/gateway/policies/policy-impact.js';
import type { PolicyRule } from '../src/config/policy-schema.js';
import type { BridgedTool } from '../src/upstream/catalogue/tool-bridge.js';
import type { ServerSnapshot } from '../src/upstream/server-snapshot.js';

export type { ErrorInfo, HelloEvent, ServerSnapshot, ServerStatus };

/** What the dashboard reads of `GET /status`; the route builds its body inline (src/http/routes/status.ts). */
export interface StatusBody {
  state: RuntimeState;
  version: string;
  servers: ServerSnapshot[];
  /** In a cluster (issue #43): every replica by its heartbeat, and the live ones' traffic summed. */
  replicas?: ReplicaInfo[];
  cluster?: ClusterTraffic;
}

export type { ClusterTraffic, ReplicaInfo };

/**
 * One event of `/events`: `{seq, ts, type, …}`. Kept open (any field, read with a check): the
 * Events view lists every type, including ones newer than this page.
 */
export interface FeedEvent {
  seq: number;
  ts: string;
  type: string;
  server?: string | null;
  [field: string]: unknown;
}

/** The fields of a `call.finished` the Calls view charts; an audit row fills the same ones (call-history.ts). */
export type CallFinished = Pick<CallFinishedEvent, 'type' | 'server' | 'name' | 'outcome' | 'durationMs'> & Pick<StampedEvent, 'seq' | 'ts'>;

/** A `GET /audit` entry: the store's entry, its `ts` as the ISO `time` the route answers with. */
export type AuditEntryBody = Omit<AuditEntry, 'ts'> & { id: number; time: string };

/** An agent as `GET /agents` lists it, with its budget's windows when it has one (issue #38). */
export type AgentRow = AgentInfo & { spent?: BudgetStatus };

export type { HeldToolView, PendingApproval, ProgressData };

/** A hit of `GET /tools/search` (an entry of `GET /tools` has no score). */
export type ToolSummary = Pick<BridgedTool, 'name' | 'server' | 'title' | 'description'> & { score?: number };

/**
 * A JSON Schema as the try form reads it: the few keywords it renders. The daemon passes a
 * server's schema through untyped (`Tool['inputSchema']`), so this is the dashboard's view of it.
 */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
}

/** `GET /tools/:name`: the catalogue's tool, its schemas read through `JsonSchema`. */
export type ToolDetail = ToolSummary &
  Pick<BridgedTool, 'annotations'> & {
    inputSchema: JsonSchema;
    outputSchema?: JsonSchema;
  };

/**
 * One content item of an MCP result as the result view renders it: every kind's fields in one
 * loose shape (the SDK's union, `ContentBlock`, narrows per kind), so one renderer shows them all.
 */
export interface ContentItem {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri: string; mimeType?: string; text?: string; blob?: string };
}

/** A tool's result as `POST /tools/:name/call` answers it (MCP's `CallToolResult`, read loosely). */
export interface CallResult {
  content?: ContentItem[];
  structuredContent?: unknown;
  isError?: boolean;
}

/** `GET /search/stats` (issue #37): what tool searches found since start. */
export type SearchStats = SearchStatsSnapshot;

/** A rule of `GET /policies/impact`: the rule in force with its shadow sums beside it. */
export type PolicyWithImpact = PolicyRule & { impact: ImpactRow[] };
export type { ImpactRow };
