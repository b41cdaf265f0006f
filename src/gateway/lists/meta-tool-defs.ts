import type { Tool } from '@modelcontextprotocol/server';

/**
 * The three tools `/mcp` lists in `search` mode instead of the catalogue (SPEC §13). Their
 * descriptions are what a model reads to use them, so they say how: search, then call.
 */

export const SEARCH_TOOLS = 'search_tools';
export const DESCRIBE_TOOLS = 'describe_tools';
export const CALL_TOOL = 'call_tool';
export const READ_RESULT = 'read_result';
export const RUN_SCRIPT = 'run_script';
/** Longest `run_script` script, in characters. */
export const MAX_SCRIPT_LENGTH = 100_000;

/** Longest `search_tools` query, in characters. */
export const MAX_QUERY_LENGTH = 500;
/** Most matches one `search_tools` answers (and names one `describe_tools` takes). */
export const MAX_SEARCH_LIMIT = 50;
/**
 * Matches when `search_tools` is given no `limit`. Five: past them a name in the answer's map
 * (`related`) tells a model more per byte than another schema (issue #37).
 */
export const DEFAULT_SEARCH_LIMIT = 5;

const NAMES: ReadonlySet<string> = new Set([SEARCH_TOOLS, DESCRIBE_TOOLS, CALL_TOOL, READ_RESULT, RUN_SCRIPT]);

export function isMetaToolName(name: string): boolean {
  return NAMES.has(name);
}

export const META_TOOLS: readonly Tool[] = [
  {
    name: SEARCH_TOOLS,
    title: 'Search tools',
    description:
      'Finds tools for a task among the many tools available here (only a few are listed directly). ' +
      'Describe what you want to do in plain words, e.g. "create a GitHub issue" or "read a file". ' +
      'Returns the best matches, best first, each with its full input schema, and under "related" the other likely tools ' +
      `by server (names, the likeliest with a sentence): get the schema of one of those with ${DESCRIBE_TOOLS}. Then run a tool with ${CALL_TOOL}, ` +
      'or call it directly by its name. Search again with other words if nothing fits.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_LENGTH, description: 'What you want to do, in a few words.' },
        limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, default: DEFAULT_SEARCH_LIMIT, description: 'How many matches to return.' },
        server: { type: 'string', description: 'Only tools of this server.' },
      },
      required: ['query'],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: DESCRIBE_TOOLS,
    title: 'Describe tools',
    description:
      'Gives the full definitions (description and input schema) of tools whose names you already know, ' +
      `e.g. from an earlier ${SEARCH_TOOLS} or a previous conversation. Unknown names are reported one by one.`,
    inputSchema: {
      type: 'object',
      properties: {
        names: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_SEARCH_LIMIT, description: 'Exact tool names.' },
      },
      required: ['names'],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: 'Call a tool',
    description:
      `Runs a tool found with ${SEARCH_TOOLS} or ${DESCRIBE_TOOLS}: give its exact name and its arguments as its input schema asks. ` +
      "The answer is that tool's own result, as if you had called it directly.",
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The exact name of the tool to run.' },
        arguments: { type: 'object', description: "The tool's arguments, matching its input schema.", additionalProperties: true },
      },
      required: ['name'],
    },
  },
];

/**
 * Reads a result Switchboard cut to fit the caller's token cap (issue #38): listed to a caller
 * once one of its results was cut, in every catalogue mode. The note of the cut result says how.
 */
export const READ_RESULT_TOOL: Tool = {
  name: READ_RESULT,
  title: 'Read a cut result',
  description:
    'Reads more of a tool result that was too long and was cut: give the handle from its note. ' +
    'Page it by characters (offset, length) or lines (line, lines), find lines containing a text (query), ' +
    'or take a slice of its JSON (path, e.g. "$.items[0:10].name"). A content item left out (an image) is read with item. ' +
    'Each answer fits the same token cap and says where the next page starts.',
  inputSchema: {
    type: 'object',
    properties: {
      handle: { type: 'string', description: "The handle from the cut result's note." },
      offset: { type: 'integer', minimum: 0, description: 'First character to read.' },
      length: { type: 'integer', minimum: 1, description: 'How many characters to read (at most what fits the cap).' },
      line: { type: 'integer', minimum: 1, description: 'First line to read (1-based), instead of offset.' },
      lines: { type: 'integer', minimum: 1, description: 'How many lines to read.' },
      query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_LENGTH, description: 'Lines containing this text (case-insensitive), with two lines of context.' },
      path: { type: 'string', description: "A JSONPath: $, .name, ['name'], [3], [-1], [0:10], [*]." },
      item: { type: 'integer', minimum: 0, description: "A content item by index (a left-out image's base64 data), paged by offset and length." },
    },
    required: ['handle'],
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
};

/**
 * Code mode (issue #39): one script calls many tools and only its answer comes back. Listed to a
 * caller with `codeMode` on, in every catalogue mode.
 */
export const RUN_SCRIPT_TOOL: Tool = {
  name: RUN_SCRIPT,
  title: 'Run a script',
  description:
    'Runs JavaScript (the body of an async function) that calls tools, and returns only its return value: use it for many calls or to combine results. ' +
    "In the script: await tools.call(name, args) gives the tool's result (its structured content, or its text, parsed if JSON) and throws on a tool error; " +
    'await tools.search(query) finds tools; tools.list() lists them; console.log output is returned too. ' +
    'Promise.all runs calls concurrently. No Node APIs, require, import, fetch or timers. Limits: 100 calls, 30 s, 64 MiB. ' +
    'Example: const a = await tools.call("srv__get", {id: 1}); return a.total;',
  inputSchema: {
    type: 'object',
    properties: {
      code: { type: 'string', minLength: 1, maxLength: MAX_SCRIPT_LENGTH, description: 'The script; `return` its answer (JSON).' },
      timeoutMs: { type: 'integer', minimum: 10, description: "Stop the script after this long (at most the daemon's limit)." },
    },
    required: ['code'],
  },
  annotations: { openWorldHint: true },
};
