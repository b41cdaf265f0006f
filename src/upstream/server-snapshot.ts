import type { ServerSource, TransportKind } from '../config/types.js';
import type { ErrorInfo } from '../errors.js';
import type { ServerStatus } from '../events/daemon-events.js';
import type { LoggedMessage } from './transport/log-message.js';
import { transportKindOf } from './transport/transports.js';
import type { ServerShare } from './catalogue/catalogues.js';
import type { CompanionState } from './server/era-companion.js';
import type { HeldToolView } from './catalogue/tool-pins.js';
import type { ConcurrencyState, TrafficState, Upstream } from './server/upstream.js';
import { sandboxPlan, viewOf, type SandboxContext, type SandboxView } from './process/sandbox-plan.js';

/** The public, read-only view of a server used by `/status`, `/servers` and the CLI. */
export interface ServerSnapshot {
  name: string;
  status: ServerStatus;
  transport: TransportKind;
  source: ServerSource;
  toolCount: number;
  /** Prompts, and resources plus resource templates, the server contributes. */
  promptCount: number;
  resourceCount: number;
  /** Tools held because their definition changed since they were served (issue #22). */
  heldToolCount: number;
  deferred: boolean;
  stale: boolean;
  /** The last failure, with its stable code; cleared by a successful connect. */
  lastError: ErrorInfo | null;
  connectedSince: string | null;
  serverInfo: { name: string; version: string; title?: string } | null;
  /** The protocol era and revision of the live connection. */
  protocol: { era: 'legacy' | 'modern'; version: string | null } | null;
  /** The stdio child's pid while connected; null for HTTP servers and while down. */
  pid: number | null;
  /** When the next reconnect attempt starts, while one is scheduled (a dashboard counts down to it). */
  nextRetryAt: string | null;
  /** Its concurrency limit and the requests running and waiting (issue #35; the whole of it is `traffic`). */
  concurrency: ConcurrencyState;
  /** The sandbox a stdio server runs in (issue #42): what it may read and write, its network; null when none. */
  sandbox: SandboxView | null;
}

export interface ServerDetail extends ServerSnapshot {
  tools: string[];
  /** Held tools, each with which fields changed and the definition before and after. */
  heldTools: HeldToolView[];
  stderrTail: string[];
  /** The last MCP log messages (`notifications/message`) the server sent, oldest first. */
  logMessages: LoggedMessage[];
  /** Prompts (exposed names), resources and resource templates (URIs) the server contributes. */
  prompts: string[];
  resources: string[];
  resourceTemplates: string[];
  /** Successful reconnects since this config was loaded. */
  restarts: number;
  /** The reconnect attempt scheduled or running (0: none). */
  attempt: number;
  /** How the last stdio child ended. */
  lastExit: { code: number | null; signal: string | null } | null;
  /**
   * The sign-in waiting for a person (status `needs_auth`, or a `login` under way): open
   * `authorizationUrl` in a browser before `expiresAt`. Shown here only, never in logs or events.
   */
  signIn: { authorizationUrl: string; expiresAt: string } | null;
  /** The 2025-era companion connection for 2025-era agents (issue #21; see era-companion.ts). */
  companion: CompanionState;
  /** Requests running and queued, the limits, and a pause the server asked for (issue #26). */
  traffic: TrafficState;
}

/** The transport a config asks for, or `stdio` for one too broken to say (it failed validation). */
export function configuredTransport(upstream: Pick<Upstream, 'config'>): TransportKind {
  try {
    return transportKindOf(upstream.config);
  } catch {
    return 'stdio';
  }
}

/** The sandbox the server's config asks for, as shown; null for none (or one it cannot have: `lastError` says why). */
function sandboxOf(upstream: Upstream, context: SandboxContext | undefined): SandboxView | null {
  if (configuredTransport(upstream) !== 'stdio') return null;
  try {
    const plan = sandboxPlan(upstream.config, context);
    return plan ? viewOf(plan) : null;
  } catch {
    return null;
  }
}

export function snapshotOf(upstream: Upstream, share: Readonly<ServerShare>, sandbox?: SandboxContext): ServerSnapshot {
  const info = upstream.connection?.serverInfo;
  return {
    name: upstream.name,
    status: upstream.status,
    transport: upstream.connection?.transport ?? configuredTransport(upstream),
    source: upstream.source,
    toolCount: share.tools.length,
    promptCount: share.prompts.length,
    resourceCount: share.resources.length + share.resourceTemplates.length,
    heldToolCount: share.held.length,
    deferred: share.deferred,
    stale: share.stale,
    lastError: upstream.lastError ?? null,
    connectedSince: upstream.connectedSince === undefined ? null : new Date(upstream.connectedSince).toISOString(),
    serverInfo: info ? { name: info.name, version: info.version, ...(info.title ? { title: info.title } : {}) } : null,
    protocol: upstream.connection ? { era: upstream.connection.era, version: upstream.connection.protocolVersion ?? null } : null,
    pid: upstream.connection?.pid ?? null,
    nextRetryAt: upstream.nextRetryAt === undefined ? null : new Date(upstream.nextRetryAt).toISOString(),
    concurrency: upstream.concurrency,
    sandbox: sandboxOf(upstream, sandbox),
  };
}

export function detailOf(
  upstream: Upstream,
  share: Readonly<ServerShare>,
  names: { tools: string[]; prompts: string[] },
  signIn?: ServerDetail['signIn'],
  sandbox?: SandboxContext,
): ServerDetail {
  const exit = upstream.lastExit;
  return {
    ...snapshotOf(upstream, share, sandbox),
    tools: names.tools,
    heldTools: share.held.map((held) => held.view),
    stderrTail: upstream.stderrLines(),
    logMessages: upstream.logMessages(),
    prompts: names.prompts,
    resources: share.resources.map((r) => r.uri),
    resourceTemplates: share.resourceTemplates.map((t) => t.uriTemplate),
    restarts: upstream.restarts,
    attempt: upstream.attempt,
    lastExit: exit ? { code: exit.code, signal: exit.signal } : null,
    signIn: signIn ?? null,
    companion: upstream.companion,
    traffic: upstream.traffic,
  };
}
