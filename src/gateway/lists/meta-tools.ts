// The client package's error classes: the same branded classes as the server's (the SDK matches them across its bundles), and
// already loaded, so the gateway's face does not pull the /mcp server side into a REST-only daemon.
import type { CallToolResult, ServerContext, Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { toolErrorResult } from '../../upstream/catalogue/tool-bridge.js';
import { loadSdk } from '../../upstream/sdk.js';
import type { AgentRef } from '../agents/agent-ref.js';
import type { CatalogueModes } from './catalogue-mode.js';
import type { ReadRequest } from '../results/result-reader.js';
import { CALL_TOOL, DEFAULT_SEARCH_LIMIT, DESCRIBE_TOOLS, MAX_QUERY_LENGTH, MAX_SCRIPT_LENGTH, MAX_SEARCH_LIMIT, READ_RESULT, RUN_SCRIPT, SEARCH_TOOLS } from './meta-tool-defs.js';

const SearchInput = z.object({
  query: z
    .string({ error: 'query must be a string' })
    .refine((query) => query.trim().length > 0, 'query must not be empty')
    .refine((query) => query.length <= MAX_QUERY_LENGTH, `query must be at most ${MAX_QUERY_LENGTH} characters`),
  limit: z
    .number({ error: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, `limit must be between 1 and ${MAX_SEARCH_LIMIT}`)
    .max(MAX_SEARCH_LIMIT, `limit must be between 1 and ${MAX_SEARCH_LIMIT}`)
    .optional(),
  server: z.string({ error: 'server must be a string' }).optional(),
});

const DescribeInput = z.object({
  names: z
    .array(z.string({ error: 'names must be strings' }), { error: 'names must be an array of tool names' })
    .min(1, 'names must name at least one tool')
    .max(MAX_SEARCH_LIMIT, `names takes at most ${MAX_SEARCH_LIMIT} tools`),
});

const CallInput = z.object({
  name: z.string({ error: 'name must be a string' }),
  arguments: z.record(z.string(), z.unknown(), { error: 'arguments must be an object' }).optional(),
});

const count = (field: string, min: number) =>
  z
    .number({ error: `${field} must be a number` })
    .int(`${field} must be a whole number`)
    .min(min, `${field} must be at least ${min}`);

/** `read_result`'s input (issue #38), shared with `GET /results/:handle`'s query. */
export const ReadInput = z
  .object({
    handle: z.string({ error: 'handle must be a string' }).min(1, 'handle must not be empty').max(200, 'handle is at most 200 characters'),
    offset: count('offset', 0).optional(),
    length: count('length', 1).optional(),
    line: count('line', 1).optional(),
    lines: count('lines', 1).optional(),
    query: z.string({ error: 'query must be a string' }).min(1, 'query must not be empty').max(MAX_QUERY_LENGTH, `query must be at most ${MAX_QUERY_LENGTH} characters`).optional(),
    path: z.string({ error: 'path must be a string' }).min(1, 'path must not be empty').max(500, 'path must be at most 500 characters').optional(),
    item: count('item', 0).optional(),
  })
  .strict()
  .refine((read) => [read.query, read.path, read.line ?? read.offset].filter((x) => x !== undefined).length <= 1, 'give one of offset/line, query or path');

/** `run_script`'s input (issue #39), shared with `POST /scripts/run`'s body. */
export const ScriptInput = z
  .object({
    code: z.string({ error: 'code must be a string' }).min(1, 'code must not be empty').max(MAX_SCRIPT_LENGTH, `code must be at most ${MAX_SCRIPT_LENGTH} characters`),
    timeoutMs: count('timeoutMs', 10).optional(),
  })
  .strict();

/** A script run as `/mcp` answers it (issue #39): its value, or an `isError` result with the script's line. */
export type ScriptRunner = (code: string, timeoutMs: number | undefined, ctx: ServerContext) => Promise<CallToolResult>;

/** A read of a kept result as `/mcp` answers it (a tool error for a bad or unknown handle). */
export type ResultReader = (handle: string, read: ReadRequest, ctx: ServerContext) => Promise<CallToolResult>;

/** A tool call as `/mcp` answers it: the result, an `input_required` round, or a thrown JSON-RPC error. */
export type ToolCaller = (name: string, args: Record<string, unknown> | undefined, ctx: ServerContext) => Promise<CallToolResult>;

export interface MetaToolDeps {
  modes: CatalogueModes;
  /** The one `tools/call` path (tool-call.ts): `call_tool` is a direct call under another name. */
  call: ToolCaller;
  /** Reads of kept results (`read_result`, issue #38), through the gateway. */
  read?: ResultReader;
  /** Code-mode scripts (`run_script`, issue #39), through the gateway. */
  run?: ScriptRunner;
}

/**
 * Runs a meta-tool of `search` mode. `search_tools` and `describe_tools` answer from the caller's
 * view only; bad input is a tool error (`VALIDATION_FAILED`), never a crash. `call_tool` hands the
 * named tool to the direct call path, so its result, progress, cancellation, `input_required`
 * rounds, errors and `_meta` are the direct call's; a malformed `call_tool` request is refused as
 * a malformed `tools/call` is, with `InvalidParams`.
 */
export async function runMetaTool(
  name: string,
  args: Record<string, unknown> | undefined,
  ctx: ServerContext,
  agent: AgentRef | undefined,
  deps: MetaToolDeps,
): Promise<CallToolResult> {
  if (name === CALL_TOOL) {
    const parsed = CallInput.safeParse(args ?? {});
    if (!parsed.success) throw await invalidParams(`Invalid arguments for ${CALL_TOOL}: ${problems(parsed.error)}`);
    return deps.call(parsed.data.name, parsed.data.arguments, ctx);
  }
  if (name === READ_RESULT && deps.read) {
    const parsed = ReadInput.safeParse(args ?? {});
    if (!parsed.success) return invalid(READ_RESULT, parsed.error);
    const { handle, ...read } = parsed.data;
    return deps.read(handle, read, ctx);
  }
  if (name === RUN_SCRIPT && deps.run) {
    const parsed = ScriptInput.safeParse(args ?? {});
    if (!parsed.success) return invalid(RUN_SCRIPT, parsed.error);
    return deps.run(parsed.data.code, parsed.data.timeoutMs, ctx);
  }
  if (name === SEARCH_TOOLS) {
    const parsed = SearchInput.safeParse(args ?? {});
    if (!parsed.success) return invalid(SEARCH_TOOLS, parsed.error);
    const { query, limit = DEFAULT_SEARCH_LIMIT, server } = parsed.data;
    const answer = await deps.modes.search(query, limit, server, agent);
    const structured = { tools: answer.tools, related: answer.related };
    const text = answer.tools.length === 0 ? `No tool matches "${query}". Try other words.` : JSON.stringify(structured);
    return { content: [{ type: 'text', text }], structuredContent: structured };
  }
  if (name === DESCRIBE_TOOLS) {
    const parsed = DescribeInput.safeParse(args ?? {});
    if (!parsed.success) return invalid(DESCRIBE_TOOLS, parsed.error);
    const tools: Tool[] = [];
    const unknown: Array<{ name: string; code: 'TOOL_NOT_FOUND'; message: string }> = [];
    for (const wanted of new Set(parsed.data.names)) {
      const definition = deps.modes.definition(wanted, agent);
      if (definition) tools.push(definition);
      // Outside the caller's view a name is unknown, worded as a call of it would be.
      else unknown.push({ name: wanted, code: 'TOOL_NOT_FOUND', message: `No tool named "${wanted}"` });
    }
    const structured = { tools, unknown };
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }
  throw await invalidParams(`No meta-tool named "${name}"`);
}

/** A malformed meta-tool request, refused as a malformed `tools/call` is. */
async function invalidParams(message: string): Promise<Error> {
  const { ProtocolError, ProtocolErrorCode } = await loadSdk();
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

function invalid(tool: string, error: z.ZodError): CallToolResult {
  return toolErrorResult({ code: 'VALIDATION_FAILED', message: `Invalid arguments for ${tool}: ${problems(error)}` });
}

function problems(error: z.ZodError): string {
  return error.issues.map((issue) => issue.message).join('; ');
}
