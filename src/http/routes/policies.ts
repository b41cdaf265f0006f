import type { FastifyPluginCallback } from 'fastify';
import { z } from 'zod';
import type { Gateway } from '../../gateway/index.js';
import { parseInput } from '../schemas.js';
import { AuditQuerySchema } from './audit.js';

export interface PolicyRoutesOptions {
  gateway: Pick<Gateway, 'policies'>;
}

const ImpactQuerySchema = z.object({
  /** An ISO time, or ms since the epoch. @default everything kept since start */
  since: AuditQuerySchema.shape.since,
});

/**
 * `GET /policies/impact?since=` (operator; issue #40 item 2): the rules in force, each with what
 * its shadow mode would have refused — sums by rule × agent × tool, with example ids — so a rule
 * can be tried on live traffic before it is enforced. The dashboard shows each sum beside its rule.
 */
export const policyRoutes: FastifyPluginCallback<PolicyRoutesOptions> = (app, { gateway }, done) => {
  app.get('/policies/impact', async (request) => {
    const query = parseInput(ImpactQuerySchema, request.query, 'query');
    const since = query.since ?? 0;
    const { rows, dropped } = gateway.policies.impact(since);
    const rules = gateway.policies.rules.map((rule) => ({ ...rule, impact: rows.filter((row) => row.rule === rule.name) }));
    return { since: new Date(since).toISOString(), rules, impact: rows, dropped };
  });
  done();
};
