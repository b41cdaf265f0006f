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

/** One `tools/list` page: `tools` is an array of objects with a string `name`; the rest is kept as is. */
export const ToolPageResult = schema<ToolPage>((value) => {
  if (!isObject(value)) return 'the result is not an object';
  const { tools, nextCursor } = value;
  if (!Array.isArray(tools)) return '"tools" is not an array';
  if (!tools.every((tool) => isObject(tool) && typeof tool.name === 'string')) return 'a tool has no name';
  if (nextCursor !== undefined && typeof nextCursor !== 'string') return '"nextCursor" is not a string';
  return undefined;
});

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
