import type { FastifyPluginCallback } from 'fastify';
import { z } from 'zod';
import { CLIENT_GONE, ReadInput, type Gateway } from '../../gateway/index.js';
import { restTrace } from '../../telemetry/agent-trace.js';
import { parseInput } from '../schemas.js';

export interface ResultRoutesOptions {
  gateway: Gateway;
}

const whole = (field: string) => z.string().regex(/^\d+$/, `${field} must be a whole number`).transform(Number);

/** `GET /results/:handle`'s query: `read_result`'s fields as strings (`q` is `query`). */
const ResultQuerySchema = z
  .object({
    offset: whole('offset').optional(),
    length: whole('length').optional(),
    line: whole('line').optional(),
    lines: whole('lines').optional(),
    q: z.string().optional(),
    path: z.string().optional(),
    item: whole('item').optional(),
  })
  .strict();

const HandleParamsSchema = z.object({ handle: z.string().min(1, { error: 'Must not be empty' }).max(200, { error: 'Too long' }) });

/**
 * A result the guard cut, read over REST (issue #38): `GET /results/:handle?offset=&length=`,
 * `?line=&lines=`, `?q=` or `?path=`. The same read as `read_result`: through the gateway, within
 * the caller's cap, its caller's (or the operator's) only; `RESULT_EXPIRED` (410) once gone.
 */
export const resultRoutes: FastifyPluginCallback<ResultRoutesOptions> = (app, { gateway }, done) => {
  app.get('/results/:handle', async (request, reply) => {
    const { handle } = parseInput(HandleParamsSchema, request.params, 'params');
    const { q, ...query } = parseInput(ResultQuerySchema, request.query, 'query');
    const { handle: _handle, ...read } = parseInput(ReadInput, { handle, ...query, ...(q !== undefined ? { query: q } : {}) }, 'query');
    try {
      return await gateway.readResult(handle, read, {
        transport: 'rest',
        client: reply.raw,
        ...(request.agent ? { agent: request.agent } : {}),
        ...restTrace(gateway, request.headers),
      });
    } catch (err) {
      if (err === CLIENT_GONE) return reply.hijack();
      throw err;
    }
  });
  done();
};
