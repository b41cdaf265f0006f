import { z } from 'zod';
import { globMatcher as nameGlobMatcher, globProblem as nameGlobProblem } from '../util/glob-matcher.js';

/**
 * An agent of the config's `agents` table or of `switchboard agents add` (issue #22): its view
 * (server and tool globs, `exclude`, `access`) and the limits other parts enforce. This file only
 * parses and validates; the registry (gateway/agents/agent-registry.ts) keeps them and their keys.
 */

/** Letters, digits, `.`, `_`, `-`; starts with a letter or digit; at most 64 characters. */
export const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const AgentNameSchema = z.string().regex(AGENT_NAME, 'an agent name is 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit');

/** Why `glob` cannot be used, or undefined when it can (the rules of util/glob-matcher.ts, shared with `requireApproval`). */
export function globProblem(glob: string): string | undefined {
  const problem = nameGlobProblem(glob);
  return problem === undefined ? undefined : `malformed glob "${glob}": ${problem}`;
}

const GlobSchema = z
  .string()
  .min(1, 'a glob must not be empty')
  .superRefine((glob, ctx) => {
    const problem = globProblem(glob);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** `read`: read-only tools, prompts, resources; `write`: also non-destructive tools; `all`: everything in scope. */
export const AGENT_ACCESS = ['read', 'write', 'all'] as const;
export type AgentAccess = (typeof AGENT_ACCESS)[number];

/** An ISO date (`2027-01-31`) or date-time with an offset (`2027-01-31T12:00:00Z`). */
export const IsoDateSchema = z.union([z.iso.datetime({ offset: true }), z.iso.date()], {
  error: 'expected an ISO date (2027-01-31) or date-time (2027-01-31T12:00:00Z)',
});

/** The settings of one agent, everything but its key. */
export const AgentSettingsSchema = z
  .object({
    /** Servers the agent may use, as globs over server names. @default every server */
    servers: z.array(GlobSchema).optional(),
    /** Tools the agent may see, as globs over the exposed tool names. @default every tool of its servers */
    tools: z.array(GlobSchema).optional(),
    /** Tools hidden from the agent; wins over `tools`. @default none */
    exclude: z.array(GlobSchema).optional(),
    /** What the agent may call, from the tools' annotations. @default "all" */
    access: z.enum(AGENT_ACCESS, { error: 'access must be "read", "write" or "all"' }).optional(),
    /** How `/mcp` presents the catalogue to this agent (SPEC §13). @default the daemon's */
    catalogue: z.enum(['full', 'search', 'auto'], { error: 'catalogue must be "full", "search" or "auto"' }).optional(),
    /**
     * Tools listed beside the meta-tools in `search` mode, as globs over exposed names; replaces
     * the daemon's `pinned`. @default the daemon's
     */
    pinned: z.array(GlobSchema).optional(),
    /** `run_script` and `POST /scripts/run` for this agent (issue #39); wins over the daemon's `codeMode`. @default the daemon's */
    codeMode: z.boolean({ error: 'codeMode must be true or false' }).optional(),
    /** A token bucket: `perMinute` calls refilled per minute, at most `burst` at once. @default none */
    rateLimit: z
      .object({
        perMinute: z.number().int().positive(),
        /** @default perMinute */
        burst: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
    /** Calls of this agent in flight at once. @default no limit */
    maxConcurrentCalls: z.number().int().positive().optional(),
    /** After this moment the agent's keys answer 401 `KEY_EXPIRED`. @default never */
    expiresAt: IsoDateSchema.optional(),
    /** Tools whose calls wait for an operator's approval, as globs over exposed names. @default none */
    requireApproval: z.array(GlobSchema).optional(),
    /**
     * This agent's results over this many tokens reach it cut, with a handle (issue #38); wins over
     * every other cap; 0 = off. @default the tool's, server's or daemon's
     */
    maxResultTokens: z.number({ error: 'maxResultTokens must be a whole number' }).int().nonnegative().max(10_000_000).optional(),
    /**
     * Tokens the gateway may hand this agent (tool definitions and results after the guard) per
     * rolling hour and per day (issue #38 item 4); over it, calls answer `BUDGET_EXCEEDED`. @default no budget
     */
    budget: z
      .object({
        tokensPerHour: z.number().int().positive().optional(),
        tokensPerDay: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** A config entry: the settings, plus a key given in the file (`${VAR}` or `!cmd` keep it out of it). */
export const AgentConfigSchema = AgentSettingsSchema.extend({
  /** The agent's key; without one, `switchboard agents rotate <name>` issues a stored one. */
  key: z.string().min(1).optional(),
}).strict();

export type AgentSettings = z.infer<typeof AgentSettingsSchema>;
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

/** A test of names against `globs` (any matches); no globs at all matches every name. */
export function globMatcher(globs: readonly string[] | undefined): (name: string) => boolean {
  return globs === undefined ? () => true : nameGlobMatcher(globs);
}
