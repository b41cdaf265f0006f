import { z } from 'zod';
import { globProblem } from '../util/glob-matcher.js';
import { celProblem } from './policy-cel.js';

const Glob = z
  .string()
  .min(1, { error: 'Must not be empty' })
  .superRefine((glob, ctx) => {
    const problem = globProblem(glob);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `invalid glob "${glob}": ${problem}` });
  });

/**
 * One argument policy (issue #40 item 1). A rule applies to a request its `match` selects (every
 * list given must match; none given, every request) and whose `when` is true. The first rule that
 * applies decides; none applies, the request is allowed.
 */
export const PolicyRuleSchema = z
  .object({
    /** Named in `POLICY_DENIED`, in approvals and in `GET /policies/impact`; unique. */
    name: z.string().min(1).max(128),
    /** Which requests the rule looks at; each list is globs. @default every request */
    match: z
      .object({
        /** Agent names; the operator (and a daemon without keys) has no name and matches no `agents`. */
        agents: z.array(Glob).min(1).optional(),
        /** Server names. */
        servers: z.array(Glob).min(1).optional(),
        /** Tool or prompt names, the exposed name or the server's own; a rule with `tools` never matches a resource read. */
        tools: z.array(Glob).min(1).optional(),
      })
      .strict()
      .default({}),
    /** CEL over `agent`, `tool`, `args`, `request`, `now`; type-checked at load. @default "true" */
    when: z.string().min(1, { error: 'Must not be empty' }).default('true'),
    /** `deny` refuses with `POLICY_DENIED`; `approve` holds the call for an operator; `allow` lets it through (later rules unread). */
    effect: z.enum(['deny', 'approve', 'allow']),
    /** Told to the agent with `POLICY_DENIED` and to the operator with an approval. @default "denied by policy" */
    reason: z.string().min(1).max(1024).optional(),
    /** `shadow`: evaluated and counted (`GET /policies/impact`), never enforced. @default "enforce" */
    mode: z.enum(['enforce', 'shadow']).default('enforce'),
  })
  .strict()
  .superRefine((rule, ctx) => {
    // Parsed and type-checked over the declared variables (policy-cel.ts), so the issue names the rule and where.
    const problem = celProblem(rule.when);
    if (!problem) return;
    const at = problem.line === undefined ? '' : ` at ${problem.line}:${problem.column}`;
    ctx.addIssue({ code: 'custom', path: ['when'], message: `policy "${rule.name}": CEL does not compile${at}: ${problem.message}` });
  });

export type PolicyRule = z.infer<typeof PolicyRuleSchema>;

/** `policies`: the rules in order; names unique. @default [] */
export const PoliciesSchema = z.array(PolicyRuleSchema).superRefine((rules, ctx) => {
  const seen = new Set<string>();
  rules.forEach((rule, index) => {
    if (seen.has(rule.name)) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `duplicate policy name "${rule.name}"` });
    seen.add(rule.name);
  });
});
