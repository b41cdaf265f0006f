import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { DaemonConfig } from '../config/schema.js';
import { SwitchboardError } from '../errors.js';
import type { MCPManager } from '../upstream/manager.js';
import { OAUTH_CALLBACK_PATH, type OAuthBroker } from '../upstream/oauth/broker.js';
import { loadSdk } from '../upstream/sdk.js';
import type { EventBus } from '../events/event-bus.js';
import type { Gateway } from '../gateway/index.js';
import type { SwitchboardRuntime } from '../runtime/runtime.js';
import { createAuthHook } from './guards/auth.js';
import { ConnectionTracker } from './lifecycle/connections.js';
import { LingeringClose } from './lifecycle/lingering-close.js';
import { closeRefusedUpgrades } from './lifecycle/refused-upgrade.js';
import type { ReplicaInfo } from '../cluster/replica-heartbeats.js';
import { isProvenForward } from '../cluster/forward-request.js';
import { createHostCheckHook } from './guards/host-check.js';
import { addReplicaRouting, type ReplicaRoutingOptions } from './replica-routing.js';
import { clientErrorHandler, errorHandler, notFoundHandler } from './error-handler.js';
import { sendError, toHttpError } from './errors/http-error.js';
import { RequestDrain } from './lifecycle/drain.js';
import { deferredPlugin } from './deferred-plugin.js';
import { namedPlugin } from './named-plugin.js';
import { approvalRoutes } from './routes/approvals.js';
import { resultRoutes } from './routes/results.js';
import { scriptRoutes } from './routes/scripts.js';
import { taskRoutes } from './routes/tasks.js';
import { agentRoutes } from './routes/agents.js';
import { auditRoutes } from './routes/audit.js';
import { searchStatsRoutes } from './routes/search-stats.js';
import { policyRoutes } from './routes/policies.js';
import { catalogueRoutes } from './routes/catalogue.js';
import { healthRoutes } from './routes/health.js';
import type { McpRoutesOptions } from './routes/mcp.js';
import { metricsRoutes } from './routes/metrics.js';
import { ServerLogger } from './server-logger.js';
import { oauthRoutes } from './routes/oauth.js';
import { operationRoutes } from './routes/operations.js';
import { serverRoutes } from './routes/servers.js';
import { toolPinRoutes } from './routes/tool-pins.js';
import { statusRoutes } from './routes/status.js';
import { toolRoutes } from './routes/tools.js';
import { UI_ROUTES, uiRoutes } from './routes/ui.js';
import type { EventHub } from './ws/event-hub.js';
import { eventsRoutes } from './ws/events.js';
import { lazyChildLoggerFactory } from './lazy-request-logger.js';

export interface AppDeps {
  config: DaemonConfig;
  manager: MCPManager;
  runtime: SwitchboardRuntime;
  /** The event stream the `/mcp` relays listen to. */
  bus: Pick<EventBus, 'subscribe'>;
  /** The `/events` feed over the same stream. */
  events: EventHub;
  /** OAuth sign-in to upstreams (issue #16). */
  oauth: OAuthBroker;
  /** The agent-facing core: keys, lists, the request path, approvals, the audit log. */
  gateway: Gateway;
  logger: Logger;
  /** Aborted when the shutdown grace period ends: in-flight calls are cancelled with 503. */
  shutdownSignal: AbortSignal;
  /** Counts the requests in flight, for shutdown's drain. @default a fresh RequestDrain */
  drain?: RequestDrain;
  /** This daemon's place in a cluster of replicas (issue #28). @default a lone daemon */
  cluster?: AppCluster;
}

/** What the HTTP side of a replica needs of its cluster. */
export interface AppCluster extends ReplicaRoutingOptions {
  /** Every replica, for `/status`. */
  replicas(): Promise<ReplicaInfo[]>;
}

/**
 * Largest request body accepted (413 beyond). Tool arguments can carry file contents, so this is
 * above fastify's 1 MiB default, but still small enough that one request cannot hog memory.
 */
export const BODY_LIMIT = 4 * 1024 * 1024;

/** Routes that answer while the daemon shuts down: a liveness probe must not flap during drain. */
const ALWAYS_OPEN = new Set(['/health']);

/**
 * Builds the Fastify app with every route of SPEC §9 registered explicitly. Never listens:
 * `cli.ts` does, so tests and embedders can pick their own port.
 */
export function buildApp(deps: AppDeps): FastifyInstance {
  const { config, manager, runtime, bus, events, oauth, gateway, logger, shutdownSignal } = deps;
  const { agents, approvals } = gateway;
  const startedAt = Date.now();

  const app = Fastify({
    loggerInstance: httpLogger(logger),
    childLoggerFactory: lazyChildLoggerFactory,
    logController: new LogController({ disableRequestLogging: !config.requestLogging }),
    bodyLimit: BODY_LIMIT,
    // We answer the drain ourselves (below), in the `{ error }` shape instead of fastify's.
    return503OnClosing: false,
    routerOptions: { maxParamLength: 512 },
    // Bad percent-encoding and over-long params never reach a route; keep their bodies ours too.
    frameworkErrors: (err, _request, reply) => void sendError(reply, toHttpError(err)),
    clientErrorHandler,
  });

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  useJsonBodiesOnly(app);

  // First of all hooks, so that every request is counted, answered early or not.
  (deps.drain ?? new RequestDrain()).install(app);

  // The Host/Origin check comes before everything, the token included: a rebound web page must
  // learn nothing, and a token it somehow holds must not make it acceptable either.
  app.addHook(
    'onRequest',
    createHostCheckHook({
      // The balancer's name browsers use (`publicUrl`) is one of ours: the OAuth callback comes back on it.
      allowedHosts: config.publicUrl !== undefined ? [...config.allowedHosts, new URL(config.publicUrl).host] : config.allowedHosts,
      allowedOrigins: config.allowedOrigins,
      logger: logger.child({ component: 'http' }),
      // A request another replica forwarded had its Host and Origin checked there (issue #28).
      ...(deps.cluster ? { trusted: (request: FastifyRequest) => isProvenForward(request.raw as never, (deps.cluster as AppCluster).sealKey) } : {}),
    }),
  );
  // Auth next, so an unauthenticated caller learns nothing, not even that we are stopping.
  // The OAuth callback is where a browser lands, without our token; its single-use state guards it.
  // The dashboard's files hold no data: the page asks for the key, and its requests carry it.
  app.decorateRequest('agent', undefined);
  app.addHook('onRequest', createAuthHook({ keys: gateway, publicRoutes: ['/health', OAUTH_CALLBACK_PATH, ...UI_ROUTES] }));
  const stopping = (): boolean => runtime.state === 'stopping' || runtime.state === 'stopped';
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    if (stopping() && !ALWAYS_OPEN.has(request.routeOptions.url ?? '')) return done(new SwitchboardError('SHUTTING_DOWN'));
    done();
  });
  // fastify closes idle keep-alive sockets once, when close starts; a request still running
  // then would leave its socket open for the whole keep-alive timeout and stall shutdown.
  app.addHook('onSend', (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    if (stopping()) void reply.header('connection', 'close');
    done(null, payload);
  });

  // An answer sent while the client may still be sending (a 413 before the body was read, a
  // refused upgrade) is followed by a lingering close, so that the client can read it.
  const lingering = new LingeringClose();
  lingering.install(app.server);
  // A WebSocket handshake answered with an HTTP status (403, 401, 404, 400) leaves a socket that
  // the HTTP server no longer tracks: nothing would ever close it, and `app.close()` would wait for
  // it. It is answered with `Connection: close` and ends gracefully, the answer flushed first.
  closeRefusedUpgrades(app, lingering);

  // From the start of close, a connection ends as soon as it has no request in progress.
  const connections = new ConnectionTracker(app.server);
  app.addHook('preClose', (done) => {
    lingering.destroyAll();
    connections.closeIdle();
    done();
  });

  const cluster = deps.cluster;
  if (cluster) {
    // A request for what another replica holds goes there. (What every replica applies, the
    // owners announce on the bus and the cluster relays: nothing here reads routes for it.)
    addReplicaRouting(app, cluster);
  }

  void app.register(namedPlugin(healthRoutes), { runtime });
  void app.register(namedPlugin(statusRoutes), {
    manager,
    runtime,
    startedAt,
    agents,
    search: () => gateway.searchHealth(),
    ...(cluster ? { replicas: () => cluster.replicas() } : {}),
  });
  void app.register(namedPlugin(agentRoutes), { agents, budgets: gateway.budgets });
  void app.register(namedPlugin(serverRoutes), { manager });
  void app.register(namedPlugin(toolRoutes), { manager, runtime, gateway });
  void app.register(namedPlugin(catalogueRoutes), { manager, gateway });
  void app.register(namedPlugin(resultRoutes), { gateway });
  void app.register(namedPlugin(scriptRoutes), { gateway });
  void app.register(namedPlugin(taskRoutes), { gateway });
  void app.register(namedPlugin(operationRoutes), { runtime });
  void app.register(namedPlugin(approvalRoutes), {
    ...(approvals ? { approvals } : {}),
    ...(cluster ? { cluster: { replicaId: cluster.replicaId, sealKey: cluster.sealKey, replicas: () => cluster.replicas() } } : {}),
  });
  void app.register(namedPlugin(toolPinRoutes), { manager });
  void app.register(namedPlugin(auditRoutes), { audit: gateway.audit });
  void app.register(namedPlugin(searchStatsRoutes), { gateway });
  void app.register(namedPlugin(policyRoutes), { gateway });
  void app.register(namedPlugin(metricsRoutes), {
    manager,
    calls: gateway.calls,
    metrics: gateway.metrics,
    requestMetrics: gateway.requestMetrics,
    startedAt,
    bus,
    subscriberCount: () => events.subscriberCount,
    budgets: gateway.budgets,
    policies: gateway.policies,
    searchStats: () => gateway.searchStats(),
  });
  void app.register(namedPlugin(eventsRoutes), { events });
  void app.register(namedPlugin(uiRoutes), {});
  // The MCP server side is loaded by the first /mcp request: a REST-only daemon never compiles it.
  const mcpRoutes = deferredPlugin<McpRoutesOptions>({ url: '/mcp', method: ['GET', 'POST', 'DELETE'] }, async () => {
    // Its answers are built with the SDK client's errors and keys (upstream/sdk.ts).
    const [{ mcpRoutes: routes }] = await Promise.all([import('./routes/mcp.js'), loadSdk()]);
    return routes;
  });
  void app.register(namedPlugin(mcpRoutes), {
    manager,
    bus,
    runtime,
    shutdownSignal,
    gateway,
    ...(cluster ? { cluster: { replicaId: cluster.replicaId, sealKey: cluster.sealKey } } : {}),
  });
  void app.register(namedPlugin(oauthRoutes), { manager, runtime, oauth, logger: logger.child({ component: 'oauth' }) });

  return app;
}

/**
 * Only JSON bodies are accepted (anything else is 415), and an empty JSON body counts as no
 * body: clients that always send `content-type: application/json` can still POST `/reload`.
 */
function useJsonBodiesOnly(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.length === 0) return done(null, undefined);
    parseJson(request, text, done);
  });
}

/**
 * The request logger: our own `req` serializer so a `?token=` (or an OAuth callback's code) never reaches a log line, and no
 * headers at all (authorization, cookies and the like are none of the log's business).
 */
function httpLogger(logger: Logger): FastifyBaseLogger {
  return new ServerLogger(
    logger.child(
      { component: 'http' },
      {
        serializers: {
          req: (request: FastifyRequest) => ({
            method: request.method,
            url: redactQueryToken(request.url),
            remoteAddress: request.ip,
          }),
          res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
        },
      },
    ),
  );
}

/** Query values that are secrets: `?token=` (WebSocket auth) and the OAuth callback's `code` and `state`. */
const SECRET_QUERY = /([?&](?:token|code|state)=)[^&#]*/gi;

export function redactQueryToken(url: string): string {
  return url.includes('=') ? url.replace(SECRET_QUERY, '$1****') : url;
}
