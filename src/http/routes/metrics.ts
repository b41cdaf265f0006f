import type { FastifyPluginCallback } from 'fastify';
import { SERVER_STATUSES, type ServerStatus } from '../../mcp/events.js';
import type { MCPManager } from '../../mcp/manager.js';
import type { CallMetrics } from '../calls/call-metrics.js';
import type { InFlightCalls } from '../calls/in-flight-calls.js';
import type { RequestMetrics } from '../calls/request-metrics.js';
import { renderTrafficMetrics } from '../calls/traffic-metrics.js';

export interface MetricsRoutesOptions {
  manager: MCPManager;
  calls: InFlightCalls;
  metrics: CallMetrics;
  requestMetrics: RequestMetrics;
  /** Live `/events` subscribers. */
  subscriberCount: () => number;
  /** When the daemon was built (ms since epoch). */
  startedAt: number;
}

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/** `GET /metrics`: Prometheus text, computed on scrape from the manager plus our call counters. */
export const metricsRoutes: FastifyPluginCallback<MetricsRoutesOptions> = (app, options, done) => {
  const { manager, calls, metrics, requestMetrics, subscriberCount, startedAt } = options;

  app.get('/metrics', (_request, reply) => {
    const byStatus = Object.fromEntries(SERVER_STATUSES.map((s) => [s, 0])) as Record<ServerStatus, number>;
    for (const server of manager.listServers()) byStatus[server.status] += 1;
    const catalogue = manager.getCatalogue();
    let deferred = 0;
    for (const tool of catalogue.list()) if (tool.deferred) deferred += 1;

    const lines = [
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
      ...metrics.render(),
      ...requestMetrics.render(),
      ...renderTrafficMetrics(manager.requests.traffic()),
      '# HELP switchboard_tool_calls_in_flight Upstream requests (tool calls, prompts, resources, …; REST and /mcp) in progress.',
      '# TYPE switchboard_tool_calls_in_flight gauge',
      `switchboard_tool_calls_in_flight ${calls.size}`,
      '# HELP switchboard_events_subscribers Connected /events WebSocket subscribers.',
      '# TYPE switchboard_events_subscribers gauge',
      `switchboard_events_subscribers ${subscriberCount()}`,
      '# HELP switchboard_uptime_seconds Seconds since the daemon was built.',
      '# TYPE switchboard_uptime_seconds gauge',
      `switchboard_uptime_seconds ${Math.round((Date.now() - startedAt) / 1000)}`,
    ];
    void reply.type(PROMETHEUS_TEXT).send(`${lines.join('\n')}\n`);
  });

  done();
};
