import type { CallToolResult, StandardSchemaV1 } from '@modelcontextprotocol/client';
import type { ToolPage } from './list-tools.js';
import { loadedSdk } from '../sdk.js';

/**
 * Result schemas for the requests Switchboard forwards. Results pass through unchanged (SPEC §7),
 * so these check only what Switchboard itself reads and copy nothing: the SDK's spec schemas
 * strip fields they do not know (inside content blocks and tool definitions), and cost a full
 * validation per call on the hot path.
 */

function schema<T>(check: (value: unknown) => string | undefined): StandardSchemaV1<unknown, T> {
  return {
    '~standard': {
      version: 1,
      vendor: 'switchboard',
      validate: (value) => {
        const problem = check(value);
        return problem === undefined ? { value: value as T } : { issues: [{ message: problem }] };
      },
    },
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Any result as the server sent it: any JSON object. */
export const PassThroughResult = schema<Record<string, unknown>>((value) => (isObject(value) ? undefined : 'the result is not an object'));

/** A `tools/call` result as the server sent it: any JSON object. */
export const PassThroughCallToolResult = schema<CallToolResult>((value) => (isObject(value) ? undefined : 'the result is not an object'));

/**
 * One `tools/list` page: `tools` is an array of tools (`toolProblem`); the rest is kept as is. A
 * page with one bad tool is refused whole, as the SDK's own schema would refuse it.
 */
export const ToolPageResult = schema<ToolPage>((value) => {
  if (!isObject(value)) return 'the result is not an object';
  const { tools, nextCursor } = value;
  if (!Array.isArray(tools)) return '"tools" is not an array';
  const problem = toolListProblem(tools);
  if (problem !== undefined) return problem;
  if (nextCursor !== undefined && typeof nextCursor !== 'string') return '"nextCursor" is not a string';
  return undefined;
});

/** The first problem of a list of tools (`toolProblem`): a listed page's, or a cached list's. */
export function toolListProblem(tools: readonly unknown[]): string | undefined {
  for (const tool of tools) {
    const problem = toolProblem(tool);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

const TEXT_FIELDS = ['description', 'title'] as const;
const OBJECT_FIELDS = ['inputSchema', 'outputSchema', 'annotations'] as const;

/**
 * What is wrong with a listed tool, in the fields Switchboard itself reads: its name, the text
 * tool search indexes (description, titles; a number there once broke search for every agent) and
 * the objects it looks into. Absent optional fields are fine; `null` is not (MCP has no null here).
 */
function toolProblem(tool: unknown): string | undefined {
  if (!isObject(tool) || typeof tool.name !== 'string') return 'a tool has no name';
  const named = `tool ${JSON.stringify(tool.name.slice(0, 100))}`;
  for (const field of TEXT_FIELDS) {
    if (tool[field] !== undefined && typeof tool[field] !== 'string') return `${named}: "${field}" is not a string`;
  }
  for (const field of OBJECT_FIELDS) {
    if (tool[field] !== undefined && !isObject(tool[field])) return `${named}: "${field}" is not an object`;
  }
  const title = isObject(tool.annotations) ? tool.annotations.title : undefined;
  if (title !== undefined && typeof title !== 'string') return `${named}: "annotations.title" is not a string`;
  return undefined;
}

/**
 * Whether the SDK refused what a server answered as not MCP: a result that fails its schema (one
 * of the above, or the SDK's own checks, e.g. a 2026-07-28 result without `resultType`), or an
 * HTTP answer that is neither JSON nor an event stream. `UPSTREAM_PROTOCOL_ERROR` (connection.ts).
 */
export function isNotMcp(err: unknown): boolean {
  const loaded = loadedSdk();
  if (!loaded) return false;
  const { SdkError, SdkErrorCode } = loaded;
  return err instanceof SdkError && (err.code === SdkErrorCode.InvalidResult || err.code === SdkErrorCode.ClientHttpUnexpectedContent);
}
