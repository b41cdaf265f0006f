import type { FastifyInstance } from 'fastify';
import type { ClusterAction } from '../cluster/cluster.js';

/**
 * The operator actions every replica must apply (issue #28 item 2), told to the others once
 * they succeeded here: agents and keys created, rotated or revoked (each replica re-reads the
 * store), held tools approved (each replica serves and pins them), reloads. Read off the route
 * and the request at the end of a 2xx answer, so the routes themselves stay cluster-blind.
 */
export function announceOperatorActions(app: FastifyInstance, announce: (action: ClusterAction) => void): void {
  app.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode >= 300) return done();
    const action = actionOf(request.method, request.routeOptions.url, request.params as Record<string, string>, request.query as Record<string, string>, request.body);
    if (action) announce(action);
    done();
  });
}

function actionOf(method: string, route: string | undefined, params: Record<string, string>, query: Record<string, string>, body: unknown): ClusterAction | undefined {
  if (method === 'GET' || route === undefined) return undefined;
  switch (route) {
    case '/agents':
    case '/agents/:name':
    case '/agents/:name/rotate':
      return { kind: 'agents.changed' };
    case '/servers/:name/tools/approve': {
      const { tools, hashes } = (body ?? {}) as { tools?: string[]; hashes?: Record<string, string> };
      return { kind: 'tools.approved', server: params.name ?? '', ...(tools ? { tools } : {}), ...(hashes ? { hashes } : {}) };
    }
    case '/reload':
      return { kind: 'reload', server: null, ...(query.force === 'true' ? { force: true } : {}) };
    case '/servers/:name/reload':
      return { kind: 'reload', server: params.name ?? '' };
    default:
      return undefined;
  }
}
