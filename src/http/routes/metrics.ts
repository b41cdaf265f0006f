import type { FastifyPluginCallback } from 'fastify';
import { errorMessage } from '../../errors.js';
import { SERVER_STATUSES, type ServerStatus } from '../../events/daemon-events.js';
import type { MCPManager } from '../../upstream/manager.js';
import type { CallMetrics } from '../../gateway/index.js';
import type { InFlightCalls } from '../../gateway/index.js';
import type { AgentBudgets, Policies, RequestMetrics, SearchStatsSnapshot } from '../../gateway/index.js';
import { renderPolicyMetrics } from '../metrics/policy-metrics.js';
import { renderSearchMetrics } from '../metrics/search-metrics.js';
import { renderTrafficMetrics } from '../metrics/traffic-metrics.js';
import { escapeLabel } from '../../util/prometheus-label.js';
import { processMetricsText } from '../metrics/process-metrics.js';
import { ServerMetrics } from '../metrics/server-metrics.js';
import { PACKAGE_VERSION } from '../package-info.js';
import type { EventBus } from '../../events/event-bus.js';

export interface MetricsRoutesOptions {
  manager: MCPManager;
  calls: InFlightCalls;
  metrics: CallMetrics;
  requestMetrics: RequestMetrics;
  /** Live `/events` subscribers. */
  subscriberCount: () => number;
  /** When the daemon was built (ms since epoch). */
  startedAt: number;
  /** Server status changes, for the restart counter. */
  bus: Pick<EventBus, 'subscribe'>;
  /** Tool search's counts (issue #37). @default none rendered */
  searchStats?: () => SearchStatsSnapshot;
  /** Token budgets per agent (issue #38): spent and left per window, as last read from the store. @default none */
  budgets?: Pick<AgentBudgets, 'known'>;
  /** Argument policies (issue #40): denials, would-be denials, evaluation errors per rule. @default none */
  policies?: Pick<Policies, 'counts'>;
}

/** `switchboard_agent_budget_tokens_{spent,left}{agent,window}` for the agents with a budget. */
function renderBudgets(budgets: Pick<AgentBudgets, 'known'> | undefined): string[] {
  const known = budgets?.known() ?? [];
  if (known.length === 0) return [];
  const lines: string[] = [];
  for (const field of ['spent', 'left'] as const) {
    lines.push(
      `# HELP switchboard_agent_budget_tokens_${field} Tokens ${field === 'spent' ? 'handed to' : 'left for'} an agent with a budget in the current window (hour, day), counted across replicas, as last read.`,
      `# TYPE switchboard_agent_budget_tokens_${field} gauge`,
    );
    for (const { agent, status } of known) {
      for (const window of ['hour', 'day'] as const) {
        const counted = status[window];
        if (counted) lines.push(`switchboard_agent_budget_tokens_${field}{agent="${escapeLabel(agent)}",window="${window}"} ${counted[field]}`);
      }
    }
  }
  return lines;
}

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/** `switchboard_build_info`: which build runs, on which Node.js; the value is always 1. */
const BUILD_INFO = [
  '# HELP switchboard_build_info The Switchboard version and the Node.js version it runs on (labels); always 1.',
  '# TYPE switchboard_build_info gauge',
  `switchboard_build_info{version="${escapeLabel(PACKAGE_VERSION)}",node="${escapeLabel(process.version)}"} 1`,
];

/**
 * `GET /metrics`: Prometheus text, computed on scrape from the manager plus our call counters,
 * followed by the process metrics (prom-client's default collectors).
 */
export const metricsRoutes: FastifyPluginCallback<MetricsRoutesOptions> = (app, options, done) => {
  const { manager, calls, metrics, requestMetrics, subscriberCount, startedAt, searchStats } = options;
  const servers = new ServerMetrics(options.bus);
  app.addHook('onClose', (_instance, closed) => {
    servers.close();
    closed();
  });

  app.get('/metrics', async (_request, reply) => {
    const listed = manager.listServers();
    const byStatus = Object.fromEntries(SERVER_STATUSES.map((s) => [s, 0])) as Record<ServerStatus, number>;
    for (const server of listed) byStatus[server.status] += 1;
    const catalogue = manager.getCatalogue();
    let deferred = 0;
    for (const tool of catalogue.list()) if (tool.deferred) deferred += 1;

    const lines = [
      ...BUILD_INFO,
      '# HELP switchboard_servers MCP servers by connection status.',
      '# TYPE switchboard_servers gauge',
      ...SERVER_STATUSES.map((status) => `switchboard_servers{status="${status}"} ${byStatus[status]}`),
      '# HELP switchboard_tools Tools in the aggregated catalogue.',
      '# TYPE switchboard_tools gauge',
      `switchboard_tools ${catalogue.list().length}`,
      '# HELP switchboard_tools_deferred Tools served from the cache while their server connects.',
      '# TYPE switchboard_tools_deferred gauge',
      `switchboard_tools_deferred ${deferred}`,
      '# HELP switchboard_catalogue_version Changes of the aggregated catalogue since start.',
      '# TYPE switchboard_catalogue_version gauge',
      `switchboard_catalogue_version ${catalogue.version}`,
      ...servers.render(listed),
      ...metrics.render(),
      ...requestMetrics.render(),
      ...renderBudgets(options.budgets),
      ...(searchStats ? renderSearchMetrics(searchStats()) : []),
      ...(options.policies ? renderPolicyMetrics(options.policies.counts()) : []),
      ...renderTrafficMetrics([...manager.upstreams()].map((u) => ({ server: u.name, state: u.traffic, waits: u.queueWaits }))),
      '# HELP switchboard_tool_calls_in_flight Upstream requests (tool calls, prompts, resources, …; REST and /mcp) in progress.',
      '# TYPE switchboard_tool_calls_in_flight gauge',
      `switchboard_tool_calls_in_flight ${calls.size}`,
      '# HELP switchboard_events_subscribers Connected /events WebSocket subscribers.',
      '# TYPE switchboard_events_subscribers gauge',
      `switchboard_events_subscribers ${subscriberCount()}`,
      "# HELP switchboard_uptime_seconds Seconds since this daemon started (its HTTP app was created); process_start_time_seconds is the process's own start.",
      '# TYPE switchboard_uptime_seconds gauge',
      `switchboard_uptime_seconds ${(Date.now() - startedAt) / 1000}`,
    ];
    // Without the process metrics the daemon's own are still worth a scrape.
    const processText = await processMetricsText().catch((err: unknown) => {
      app.log.warn({ err: errorMessage(err) }, 'process metrics unavailable');
      return '';
    });
    return reply.type(PROMETHEUS_TEXT).send(`${lines.join('\n')}\n${processText}`);
  });

  done();
};
