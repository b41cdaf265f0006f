import type { Logger } from 'pino';
import type { JwtAuthConfig } from '../config/agent-auth-schema.js';
import type { PolicyRule } from '../config/policy-schema.js';
import type { BudgetStore, SharedRateLimits } from '../store/ports.js';
import type { ResultHandles } from '../store/result-handles.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import type { MCPManager } from '../upstream/manager.js';
import type { Clock } from '../util/clock.js';
import type { AgentRegistry } from './agents/agent-registry.js';
import type { Approvals } from './approvals/approvals.js';
import type { AuditLog } from './audit/audit-log.js';
import type { CatalogueModeSettings, ToolSearcher } from './lists/catalogue-mode.js';
import type { SearchHealth } from './lists/search-setup.js';
import type { SearchStatsSnapshot } from './lists/search-stats.js';
import type { StartupState } from './lists/startup-wait.js';
import type { ResultCapSettings } from './results/result-caps.js';
import type { ScriptSettings } from './scripts/script-runs.js';
import type { TaskSettings } from './tasks/tasks.js';

// What the gateway is built from: the composition root (daemon.ts) fills it, gateway.ts reads it.

/** Catalogue settings with the searcher optional: without one, `search_tools` uses the manager's ranked index. */
export type CatalogueOptions = Omit<CatalogueModeSettings, 'searcher' | 'agentSettings'> & { searcher?: ToolSearcher };

export interface GatewayDeps {
  /** The upstream side: the catalogues and upstreams requests are routed by, the lists and the search index. */
  manager: Pick<MCPManager, 'catalogues' | 'upstream' | 'upstreams' | 'getCatalogue' | 'getPrompts' | 'getResources' | 'identity' | 'toolSearch' | 'aboutServer'>;
  /** Before the startup gate lists are partial and names may be missing: the gateway waits for it. */
  runtime: StartupState;
  /** Agents and keys, the operator key included (issue #22). */
  agents: AgentRegistry;
  /** Aborted when the shutdown grace period ends: requests in flight are cancelled (`SHUTTING_DOWN`). */
  shutdownSignal: AbortSignal;
  logger: Logger;
  /** Calls held for an operator's approval (`requireApproval`). @default none held */
  approvals?: Approvals;
  /** Where requests are recorded and `GET /audit` reads (issue #22 item 4); `auditRequests: false` keeps requests off it. */
  audit: AuditLog;
  /** `audit.enabled: false` takes the audit off the request path entirely (approval decisions are still recorded). @default true */
  auditRequests?: boolean;
  /** OpenTelemetry (issue #26): a SERVER span per request, a CLIENT span per upstream attempt. @default none */
  telemetry?: Telemetry;
  /** Catalogue modes (SPEC §13): `full`, `search` or `auto`, `searchAbove`, `pinned`, the searcher. @default auto, 40, none */
  catalogue?: CatalogueOptions;
  /** How tool search ranks, for `/status` (issue #37). @default BM25 alone */
  searchHealth?: () => SearchHealth;
  /** What searches found, for `GET /search/stats` and `/metrics` (issue #37). @default none counted */
  searchStats?: () => SearchStatsSnapshot;
  /** Time of the startup wait's deadline and of the kept results' TTL. @default the system clock */
  clock?: Clock;
  /** `maxResultTokens` and per-tool caps (issue #38). @default 25000 tokens, no tool caps */
  resultCaps?: ResultCapSettings;
  /** Where whole results are kept. @default in memory (64 MiB, then evicted), 15 min */
  keptResults?: ResultHandles;
  /** Where the tokens handed to each agent are counted (one count per cluster on PostgreSQL). @default in memory */
  budgetStore?: BudgetStore;
  /** Agents' rate limits counted once for the cluster (issue #43). @default each daemon counts its own */
  rateLimits?: SharedRateLimits;
  /** Code mode (issue #39): `codeMode`, admission, the sandbox's limits. @default off */
  scripts?: ScriptSettings;
  /** Argument policies in CEL (issue #40), validated; a reload swaps them through `policies.replace`. @default none */
  policies?: readonly PolicyRule[];
  /** `agentAuth.jwt` (issue #40 item 4): agents signed in by their identity provider's JWT. @default keys only */
  jwt?: JwtAuthConfig;
  /** Where tasks are kept (issue #41), and this replica's id, their owner's. @default in memory, '' */
  tasks?: TaskSettings;
}
