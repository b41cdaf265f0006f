import type { CallToolResult } from '@modelcontextprotocol/client';
import { DEFAULT_CALL_TIMEOUT_MS } from '../upstream/transport/client.js';
import { systemClock } from '../util/clock.js';
import type { GatewayDeps } from './gateway-deps.js';
import { AgentBudgets } from './agents/agent-budgets.js';
import { AgentLimiter } from './agents/agent-limits.js';
import { agentLimits } from './agents/cluster-rate-limit.js';
import type { AgentRef } from './agents/agent-ref.js';
import type { AgentRegistry } from './agents/agent-registry.js';
import type { AgentView } from './agents/agent-view.js';
import { CallerAuth, type Authentication } from './agents/caller-auth.js';
import type { Approvals } from './approvals/approvals.js';
import type { AuditLog } from './audit/audit-log.js';
import { McpLists } from './lists/agent-lists.js';
import type { SearchHealth } from './lists/search-setup.js';
import type { SearchStatsSnapshot } from './lists/search-stats.js';
import { CatalogueModes } from './lists/catalogue-mode.js';
import { settleStartup, type StartupState } from './lists/startup-wait.js';
import { ToolListCache } from './lists/tool-list-cache.js';
import { withToolSuggestions, type ToolSource } from './lists/tool-not-found.js';
import { appOwnToolName } from './lists/app-own-names.js';
import type { MCPManager } from '../upstream/manager.js';
import { CallMetrics } from './requests/call-metrics.js';
import { InFlightCalls } from './requests/in-flight-calls.js';
import type { RequestOptions, RequestResult } from './requests/pipeline.js';
import { createRequestPipeline, type RequestPath } from './requests/request-pipeline.js';
import { RequestMetrics } from './requests/request-metrics.js';
import { RequestRouter, type AgentRequest } from './requests/request-router.js';
import { ownerOf } from './requests/stages/result-guard.js';
import { ResultCaps } from './results/result-caps.js';
import { runScriptRequest } from './requests/run-script.js';
import { ScriptRuns } from './scripts/script-runs.js';
import { Policies } from './policies/policies.js';
import type { ReadRequest } from './results/result-reader.js';
import { DefinitionTokens } from './results/definition-tokens.js';
import { MemoryBudgetStore } from '../store/budget-store.js';
import { ResultHandles } from '../store/result-handles.js';
import { TASK_TTL_MS, Tasks } from './tasks/tasks.js';
import { NativeTasks } from './tasks/native-tasks.js';
import { MemoryTaskStore } from '../store/task-store.js';

export type { CatalogueOptions, GatewayDeps } from './gateway-deps.js';
export type { Authentication } from './agents/caller-auth.js';

/**
 * The agent-facing core behind one face (SPEC §17): who is calling (`authenticate`), what a
 * caller sees (`lists`, `modes`, `toolLists`, `settleStartup`), and `request`, the one path of
 * every kind of agent request over both wires (requests/request-pipeline.ts reads as that path).
 * The operator's handles on its rooms — the registry, the approvals, the audit log — are here too,
 * for the operator routes. `http/` imports the gateway from `gateway/index.ts` and nothing else of it.
 */
export class Gateway {
  readonly agents: AgentRegistry;
  readonly approvals: Approvals | undefined;
  readonly audit: AuditLog;
  /** Every request in flight, whatever its transport. */
  readonly calls: InFlightCalls;
  /** Tool calls by tool, for `/metrics`. */
  readonly metrics = new CallMetrics();
  /** Upstream requests of every kind by method, for `/metrics`. */
  readonly requestMetrics = new RequestMetrics();
  /** The `/mcp` lists per catalogue version × view. */
  readonly lists: McpLists;
  /** Which list a `/mcp` caller gets (full, search, auto) and the meta-tools' lookups. */
  readonly modes: CatalogueModes;
  /** `GET /tools` bodies and ETags per catalogue version × query × view. */
  readonly toolLists = new ToolListCache();
  /** The whole results behind cut ones (issue #38). */
  readonly keptResults: ResultHandles;
  /** Token budgets per agent (issue #38): spent and left for `GET /agents` and `/metrics`. */
  readonly budgets: AgentBudgets;
  /** Code-mode scripts running now (issue #39), for `GET /scripts`. */
  readonly scripts: ScriptRuns;
  /** Argument policies (issue #40): the rules in force and the shadow rules' would-be denials. */
  readonly policies: Policies;
  /** Keys and JWTs (issue #40 item 4): who is calling. */
  readonly auth: CallerAuth;
  /** Gateway-run tasks (issue #41). */
  readonly tasks: Tasks;
  /** Servers' own tasks, passed through (issue #41). */
  readonly nativeTasks: NativeTasks;
  readonly #router: RequestRouter;
  readonly #path: RequestPath;
  readonly #catalogue: ToolSource;
  readonly #tools: Pick<MCPManager['catalogues']['tools'], 'get'>;
  readonly #runtime: StartupState;
  readonly #tracing: boolean;
  /** The tokens of the definitions handed out (each cached list estimated once). */
  readonly #definitionTokens = new DefinitionTokens();

  private readonly searchHealthOf: (() => SearchHealth) | undefined;
  private readonly searchStatsOf: (() => SearchStatsSnapshot) | undefined;

  constructor(deps: GatewayDeps) {
    const { manager, agents } = deps;
    this.searchHealthOf = deps.searchHealth;
    this.searchStatsOf = deps.searchStats;
    this.agents = agents;
    this.approvals = deps.approvals;
    this.audit = deps.audit;
    this.#runtime = deps.runtime;
    this.#tracing = deps.telemetry !== undefined;
    this.calls = new InFlightCalls(deps.shutdownSignal);
    this.#router = new RequestRouter(manager, deps.logger.child({ component: 'requests' }));
    this.#catalogue = { list: () => manager.getCatalogue().list() };
    this.#tools = manager.catalogues.tools;
    const audit = deps.auditRequests !== false ? deps.audit : undefined;
    const clock = deps.clock ?? systemClock;
    const limits = agentLimits(
      (name) => agents.get(name)?.settings ?? {},
      new AgentLimiter(() => clock.now()),
      deps.rateLimits,
      () => clock.now(),
    );
    this.keptResults = deps.keptResults ?? new ResultHandles({}, clock);
    this.budgets = new AgentBudgets(deps.budgetStore ?? new MemoryBudgetStore(), clock, (name) => agents.get(name)?.settings.budget);
    const caps = new ResultCaps(deps.resultCaps ?? {}, {
      serverOf: (tool) => manager.catalogues.tools.get(tool)?.server,
      serverCap: (server) => manager.upstream(server)?.config.maxResultTokens,
      agentCap: (name) => agents.get(name)?.settings.maxResultTokens,
    });
    this.auth = new CallerAuth({ agents, clock, logger: deps.logger.child({ component: 'auth' }), ...(deps.jwt ? { jwt: deps.jwt } : {}) });
    const taskStore = deps.tasks?.store ?? new MemoryTaskStore();
    this.tasks = new Tasks({ ...deps.tasks, store: taskStore, call: (name, args, options) => this.call(name, args, options), manager, logger: deps.logger, clock });
    const ttlMs = deps.tasks?.ttlMs ?? TASK_TTL_MS;
    this.nativeTasks = new NativeTasks({
      request: (request, options) => this.request(request, options),
      manager,
      store: taskStore,
      clock,
      replica: deps.tasks?.replica ?? '',
      ttlMs,
    });
    this.scripts = new ScriptRuns(deps.scripts ?? {}, (name) => agents.get(name)?.settings.codeMode);
    this.policies = new Policies(deps.policies ?? [], { catalogues: manager.catalogues, clock, logger: deps.logger.child({ component: 'policies' }), ...(audit ? { audit } : {}) });
    this.#path = createRequestPipeline({
      router: this.#router,
      runtime: deps.runtime,
      calls: this.calls,
      metrics: this.metrics,
      requestMetrics: this.requestMetrics,
      clock,
      defaultTimeoutMs: DEFAULT_CALL_TIMEOUT_MS,
      limits,
      budgets: this.budgets,
      policies: this.policies,
      results: { capOf: (tool, agent) => caps.capOf(tool, agent), handles: this.keptResults },
      scripts: (ctx) =>
        runScriptRequest(ctx, {
          scripts: this.scripts,
          call: (name, args, options) => this.call(name, args, options),
          search: async (query, agent) => (await this.modes.search(query, 10, undefined, agent)).tools,
          tools: (agent) => this.lists.tools(agent?.view),
        }),
      ...(deps.approvals ? { approvals: deps.approvals } : {}),
      ...(audit ? { audit } : {}),
      ...(deps.telemetry ? { telemetry: deps.telemetry } : {}),
    });
    this.lists = new McpLists(manager);
    const { searcher, ...catalogue } = deps.catalogue ?? {};
    this.modes = new CatalogueModes(this.lists, manager, {
      ...catalogue,
      searcher: searcher ?? ((query, options) => manager.toolSearch.rank(query, options)),
      aboutServer: (server) => manager.aboutServer(server),
      // An agent's own `catalogue` and `pinned` are read per request, so changed settings apply at once.
      agentSettings: (name) => agents.get(name)?.settings,
      // read_result is listed to a caller with a kept result, in every mode (issue #38).
      hasKeptResults: (agent) => this.keptResults.hasFor(ownerOf(agent)),
      hasCodeMode: (agent) => this.scripts.enabledFor(agent),
    });
  }

  /** How tool search ranks now, and the embeddings' state when it has them (`/status`). */
  searchHealth(): SearchHealth {
    return this.searchHealthOf?.() ?? { ranking: 'bm25' };
  }

  /** What searches found since start (`GET /search/stats`, `/metrics`). */
  searchStats(): SearchStatsSnapshot {
    return this.searchStatsOf?.() ?? { searches: 0, zeroResults: 0, conversions: { searches: 0, hits: 0, misses: 0 }, neverReturned: { count: 0, names: [] } };
  }

  /** Whether any key exists (a `token`, or an agent): without one, loopback trust. */
  get keysRequired(): boolean {
    return this.agents.keysRequired;
  }

  /** Whether stored agents are read yet; until then nobody can tell whether keys are needed. */
  get isLoaded(): boolean {
    return this.agents.isLoaded;
  }

  get loaded(): Promise<void> {
    return this.agents.loaded;
  }

  /**
   * The operator's key, an agent's (with its compiled view), or why the key is refused. A JWT
   * (with `agentAuth.jwt`) is verified asynchronously: its keys may need fetching.
   */
  authenticate(presented: string): Authentication | Promise<Authentication> {
    return this.auth.authenticate(presented);
  }

  /** Changes whenever who a key is may have changed (a key issued or revoked, …): a verdict kept from before is stale. */
  get authGeneration(): number {
    return this.auth.generation;
  }

  /** Whether an agent authenticated earlier may still act: not revoked, not expired (its JWT in time). */
  isActive(agent: AgentRef): boolean {
    return this.auth.isActive(agent);
  }

  /** Whether requests are traced: callers gather `RequestOptions.trace` only then. */
  get tracing(): boolean {
    return this.#tracing;
  }

  /** Requests in flight right now. */
  get inFlight(): number {
    return this.calls.size;
  }

  /**
   * Runs an agent's request through every stage (requests/request-pipeline.ts). Resolves with the
   * server's result; rejects with `*_NOT_FOUND`, `SHUTTING_DOWN`, a limit's refusal, the server's
   * or our own error, or — when `signal` aborted it — with that signal's reason.
   */
  request(request: AgentRequest, options: RequestOptions): Promise<RequestResult> {
    return this.#path(request, options);
  }

  /**
   * A tool call: resolves with the tool's result (upstream failures are `isError` results). An
   * unknown name rejects with `TOOL_NOT_FOUND` carrying the nearest names in the caller's view,
   * on every wire alike (REST's body, `/mcp`'s `error.data`).
   */
  async call(name: string, args: Record<string, unknown> | undefined, options: RequestOptions): Promise<CallToolResult> {
    // An MCP App's view calls its server's tools by their own names (lists/app-own-names.ts).
    if (!this.#tools.get(name)) name = appOwnToolName(name, this.#catalogue, options.agent?.view) ?? name;
    try {
      return (await this.#path({ method: 'tools/call', name, arguments: args }, options)) as CallToolResult;
    } catch (err) {
      throw withToolSuggestions(err, name, this.#catalogue, options.agent?.view);
    }
  }

  /**
   * A part of a result kept when it was cut (issue #38): a range, the lines matching a query, or a
   * JSONPath slice, within the caller's cap. Only its caller (or the operator) may read it; to
   * anyone else it is unknown (`RESULT_NOT_FOUND`); past its TTL or evicted, `RESULT_EXPIRED`.
   */
  readResult(handle: string, read: ReadRequest, options: RequestOptions): Promise<RequestResult> {
    return this.#path({ method: 'results/read', handle, read }, options);
  }

  /**
   * A code-mode script (issue #39): `run_script`'s result on `/mcp`, `{runId, calls, value | error, logs}`
   * on REST. Refused with `CODE_MODE_DISABLED` or `SERVER_BUSY`; cancelled with its request's signal.
   */
  runScript(code: string, timeoutMs: number | undefined, options: RequestOptions): Promise<RequestResult> {
    return this.#path({ method: 'scripts/run', code, timeoutMs }, options);
  }

  /**
   * Calls `listener` when a caller (an agent's name; undefined for the operator) comes to have a
   * kept result or loses its last one: `read_result` enters or leaves its `tools/list` then.
   * Returns the unsubscribe.
   */
  onKeptResultsChanged(listener: (agent: string | undefined) => void): () => void {
    return this.keptResults.onOwnerChange((owner) => listener(owner === '' ? undefined : owner));
  }

  /**
   * Counts tool definitions handed to `agent` — a `tools/list`, a search or describe answer, a
   * REST list body — against its token budget (issue #38 item 4). Lists are never refused.
   */
  async countDefinitions(agent: AgentRef | undefined, definitions: object | string): Promise<void> {
    if (!agent || !this.budgets.has(agent.name)) return;
    await this.budgets.charge(agent.name, this.#definitionTokens.of(definitions));
  }

  /** Throws `TOOL_CHANGED` when `name` is a tool held because its definition changed since it was served. */
  refuseHeld(name: string, view?: AgentView): void {
    this.#router.refuseHeld(name, view);
  }

  /** Waits for the startup gate unless told not to (`?wait=false`): before it a list would be partial. */
  settleStartup(wait?: string): Promise<void> {
    return settleStartup(this.#runtime, wait);
  }
}
