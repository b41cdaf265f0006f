import type { FastifyPluginCallback } from 'fastify';
import type { Gateway } from '../../gateway/index.js';

export interface SearchStatsRoutesOptions {
  gateway: Pick<Gateway, 'searchStats'>;
}

/**
 * `GET /search/stats` (operator; issue #37 item 5): searches since start, those that found
 * nothing, agents' searches followed by a call of a returned tool, the tools no search returned,
 * and — only with `search.recordQueries: true` — the latest query texts.
 */
export const searchStatsRoutes: FastifyPluginCallback<SearchStatsRoutesOptions> = (app, { gateway }, done) => {
  app.get('/search/stats', async () => gateway.searchStats());
  done();
};
