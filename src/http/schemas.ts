import { MAX_TIMER_MS } from '../util/abort.js';
import { z } from 'zod';
import { SwitchboardError } from '../errors.js';

/**
 * Request schemas of the HTTP API, built once at import. Each route parses its params, query
 * and body with `parseInput`, which turns the first zod issue into a 400 `VALIDATION_FAILED`
 * naming the field (`arguments: Expected object`), so callers can fix their request without
 * reading a stack.
 */

/** A server or tool name in the path. Fastify has already URL-decoded it. */
const Name = z.string().min(1, { error: 'Must not be empty' }).max(512, { error: 'Too long' });

export const NameParamsSchema = z.object({ name: Name });

/** The most characters of a name in the path (`Name`'s max). */
const MAX_NAME = 512;

/**
 * The `:name` of a route: what `parseInput(NameParamsSchema, …)` returns, without zod for a valid
 * name (the call route's hot path, issue #27); anything else goes through the schema for its error.
 */
export function parseNameParams(params: unknown): { name: string } {
  const name = (params as { name?: unknown } | null | undefined)?.name;
  if (typeof name === 'string' && name.length > 0 && name.length <= MAX_NAME) return { name };
  return parseInput(NameParamsSchema, params, 'params');
}

/** The longest "same call for a while" an operator may give: a week. */
export const MAX_APPROVAL_FOR_MS = 7 * 24 * 60 * 60 * 1000;

/** `POST /approvals/:id/approve`: empty approves the one call; `forMs` approves identical calls (agent, tool, arguments) for that long. */
export const ApproveBodySchema = z.union([
  z.object({ forMs: z.number().int().positive().max(MAX_APPROVAL_FOR_MS, { error: 'At most a week (604800000 ms)' }).optional() }).strict(),
  z.null(),
  z.undefined(),
]);

/** A pending approval's id in the path (`GET /approvals` lists them). */
export const ApprovalParamsSchema = z.object({ id: z.string().min(1, { error: 'Must not be empty' }).max(100, { error: 'Too long' }) });

/** `?wait=false` answers at once instead of awaiting the startup gate. */
const WaitFlag = z.enum(['true', 'false'], { error: 'Expected "true" or "false"' }).optional();

export const ToolListQuerySchema = z.object({
  server: z.string({ error: 'Expected a single value' }).min(1, { error: 'Must not be empty' }).optional(),
  q: z.string({ error: 'Expected a single value' }).optional(),
  wait: WaitFlag,
});
export type ToolListQuery = z.infer<typeof ToolListQuerySchema>;

export const ToolGetQuerySchema = z.object({ wait: WaitFlag });

/** The most hits `GET /tools/search` returns at once. */
export const MAX_SEARCH_LIMIT = 50;

/** `GET /tools/search?q=&limit=&server=` (issue #23). */
export const ToolSearchQuerySchema = z.object({
  q: z.string({ error: 'Expected a single value' }).trim().min(1, { error: 'Must not be empty' }).max(500, { error: 'At most 500 characters' }),
  limit: z
    .string({ error: 'Expected a single value' })
    .regex(/^\d+$/, { error: `Expected an integer from 1 to ${MAX_SEARCH_LIMIT}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(1, { error: `Expected an integer from 1 to ${MAX_SEARCH_LIMIT}` })
        .max(MAX_SEARCH_LIMIT, { error: `Expected an integer from 1 to ${MAX_SEARCH_LIMIT}` }),
    )
    .default(10),
  server: z.string({ error: 'Expected a single value' }).min(1, { error: 'Must not be empty' }).max(512, { error: 'Too long' }).optional(),
  wait: WaitFlag,
});

/** `POST /reload?force=true` restarts every server instead of reconciling. */
export const ReloadQuerySchema = z.object({
  force: z.enum(['true', 'false'], { error: 'Expected "true" or "false"' }).optional(),
});

/** A request's own deadline, overriding the server's `callTimeout`. */
const TimeoutMs = z
  .number({ error: 'Expected a positive integer' })
  .int({ error: 'Expected a positive integer' })
  .positive({ error: 'Expected a positive integer' })
  .max(MAX_TIMER_MS, { error: `At most ${MAX_TIMER_MS}` })
  .optional();

export const CallToolBodySchema = z
  .object(
    {
      arguments: z.record(z.string(), z.unknown(), { error: 'Expected object' }).optional(),
      timeoutMs: TimeoutMs,
    },
    { error: 'Expected object' },
  )
  .strict();
export type CallToolBody = z.infer<typeof CallToolBodySchema>;

/** `GET /prompts` and `GET /resources`: only one server's, and the startup gate as for tools. */
export const CatalogueListQuerySchema = z.object({
  server: z.string({ error: 'Expected a single value' }).min(1, { error: 'Must not be empty' }).optional(),
  wait: WaitFlag,
});

/** MCP prompt arguments are strings only (`prompts/get`). */
export const GetPromptBodySchema = z
  .object(
    {
      arguments: z.record(z.string(), z.string({ error: 'Expected a string' }), { error: 'Expected object' }).optional(),
      timeoutMs: TimeoutMs,
    },
    { error: 'Expected object' },
  )
  .strict();
export type GetPromptBody = z.infer<typeof GetPromptBodySchema>;

export const ResourceReadQuerySchema = z.object({
  uri: z.string({ error: (issue) => (issue.input === undefined ? 'Required' : 'Expected a single value') }).min(1, { error: 'Must not be empty' }),
});

/** Operations take no input; a body, when sent, must be an empty object (or JSON null). */
export const EmptyBodySchema = z.union([z.object({}).strict(), z.null(), z.undefined()], {
  error: 'Expected an empty object',
});

export type InputLocation = 'body' | 'params' | 'query';

/** Parses `value` or throws `VALIDATION_FAILED` naming the first offending field. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, where: InputLocation): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new SwitchboardError('VALIDATION_FAILED', describeIssue(result.error.issues[0], where));
}

function describeIssue(issue: z.core.$ZodIssue | undefined, where: InputLocation): string {
  if (!issue) return `${where}: Invalid input`;
  if (issue.code === 'unrecognized_keys') {
    const field = [...issue.path, issue.keys[0] ?? ''].join('.');
    return `${field}: Unknown field`;
  }
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : where;
  return `${field}: ${issue.message}`;
}
