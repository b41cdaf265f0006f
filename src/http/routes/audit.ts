import type { FastifyPluginCallback } from 'fastify';
import { z } from 'zod';
import type { AuditLog } from '../../gateway/index.js';
import { AUDIT_OUTCOMES } from '../../store/ports.js';
import { parseInput } from '../schemas.js';

export interface AuditRoutesOptions {
  audit: Pick<AuditLog, 'query'>;
}

/** The most entries one `GET /audit` answers with. */
export const MAX_AUDIT_LIMIT = 1000;

const Text = z.string({ error: 'Expected a single value' }).min(1, { error: 'Must not be empty' }).max(2048, { error: 'Too long' });

export const AuditQuerySchema = z.object({
  agent: Text.optional(),
  server: Text.optional(),
  /** The tool or prompt name, or the resource URI. */
  tool: Text.optional(),
  /** Only the calls of one code-mode run (issue #39). */
  runId: Text.optional(),
  outcome: z.enum(AUDIT_OUTCOMES, { error: `Expected one of ${AUDIT_OUTCOMES.join(', ')}` }).optional(),
  /** An ISO time, or ms since the epoch. */
  since: z
    .string({ error: 'Expected a single value' })
    .transform((text, ctx) => {
      const ms = /^\d{1,15}$/.test(text) ? Number(text) : Date.parse(text);
      if (Number.isNaN(ms)) {
        ctx.addIssue({ code: 'custom', message: 'Expected an ISO time or ms since the epoch' });
        return z.NEVER;
      }
      return ms;
    })
    .optional(),
  limit: z
    .string({ error: 'Expected a single value' })
    .regex(/^\d{1,4}$/, { error: `Expected a whole number from 1 to ${MAX_AUDIT_LIMIT}` })
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_AUDIT_LIMIT, { error: `Expected a whole number from 1 to ${MAX_AUDIT_LIMIT}` })
    .optional(),
});

/** `GET /audit` (operator): the newest audit entries first, filtered. */
export const auditRoutes: FastifyPluginCallback<AuditRoutesOptions> = (app, { audit }, done) => {
  app.get('/audit', async (request) => {
    const query = parseInput(AuditQuerySchema, request.query, 'query');
    const entries = await audit.query({
      ...(query.agent !== undefined ? { agent: query.agent } : {}),
      ...(query.server !== undefined ? { server: query.server } : {}),
      ...(query.tool !== undefined ? { name: query.tool } : {}),
      ...(query.outcome !== undefined ? { outcome: query.outcome } : {}),
      ...(query.since !== undefined ? { since: query.since } : {}),
      ...(query.runId !== undefined ? { runId: query.runId } : {}),
      limit: query.limit ?? 100,
    });
    return { entries: entries.map(({ ts, ...entry }) => ({ ...entry, time: new Date(ts).toISOString() })) };
  });
  done();
};
