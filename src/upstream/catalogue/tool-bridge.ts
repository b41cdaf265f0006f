import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import type { ErrorInfo } from '../../errors.js';
import { exposeToolMeta } from './app-uris.js';
import { buildNamed, exposedName, defaultPrefix, MAX_NAME_LENGTH, type Named, type NameCollision } from './naming.js';

/**
 * From upstream tools to the tools Switchboard exposes (SPEC §7): what a tool looks like in the
 * aggregate; the naming and collisions are `naming.ts`'s, shared with prompts. No I/O, no state.
 */

/** Longest exposed name; many MCP clients and model APIs reject longer tool names. */
export const MAX_TOOL_NAME_LENGTH = MAX_NAME_LENGTH;

export interface BridgedTool {
  /** Exposed name, unique in the catalogue, matching `^[A-Za-z0-9_-]{1,64}$`. */
  name: string;
  server: string;
  /** The name to call on the server. */
  originalName: string;
  /** `mcp:<server> via <providerName>` */
  path: string;
  /** The tool's `title`, else `annotations.title` (MCP's order for display names). */
  title?: string;
  /** @default "MCP tool from <server>" */
  description: string;
  /** The server's own schemas, `$schema` dialect and all, passed through. */
  inputSchema: Tool['inputSchema'];
  outputSchema?: Tool['outputSchema'];
  annotations?: Tool['annotations'];
  icons?: Tool['icons'];
  execution?: Tool['execution'];
  /** The server's own `_meta` for the tool, passed through (a `ui://` view it points at shown as Switchboard serves it). */
  _meta?: Tool['_meta'];
  /** Served from the cache; calling it first waits for the server to connect. */
  deferred: boolean;
  /** Last known tools of a server that went away; present only when true. */
  stale?: boolean;
}

export type ToolNameCollision = NameCollision;

export interface CatalogueEntry {
  server: string;
  providerName: string;
  /** @default `mcp_<server>_` */
  prefix?: string;
  tools: readonly Tool[];
  deferred: boolean;
  stale?: boolean;
}

/** `<prefix><tool>`, sanitised and bounded (see `naming.ts`); the prefix defaults to `mcp_<server>_`. */
export function exposedToolName(server: string, tool: string, prefix = defaultPrefix(server)): string {
  return exposedName(prefix, server, tool);
}

/** The aggregated tool list, sorted by name, with its name collisions. */
export function buildCatalogue(entries: ReadonlyArray<CatalogueEntry>): { tools: BridgedTool[]; collisions: ToolNameCollision[] } {
  const named = entries.map(({ tools, ...entry }) => ({ ...entry, items: tools }));
  const { items, collisions } = buildNamed(named, bridgeTool);
  return { tools: items, collisions };
}

/** A tool as the aggregate shows it. */
export function bridgeTool({ entry, item: tool, name }: Named<Tool>): BridgedTool {
  const bridged: BridgedTool = {
    name,
    server: entry.server,
    originalName: tool.name,
    path: `mcp:${entry.server} via ${entry.providerName}`,
    description: tool.description || `MCP tool from ${entry.server}`,
    inputSchema: tool.inputSchema,
    deferred: entry.deferred,
  };
  const title = tool.title ?? tool.annotations?.title;
  if (title !== undefined) bridged.title = title;
  if (tool.outputSchema !== undefined) bridged.outputSchema = tool.outputSchema;
  if (tool.annotations !== undefined) bridged.annotations = tool.annotations;
  if (tool.icons !== undefined) bridged.icons = tool.icons;
  if (tool.execution !== undefined) bridged.execution = tool.execution;
  // An MCP Apps view is read through Switchboard, under the server's name (app-uris.ts).
  const meta = exposeToolMeta(entry.server, tool._meta);
  if (meta !== undefined) bridged._meta = meta;
  if (entry.stale) bridged.stale = true;
  UPSTREAM_TOOLS.set(bridged, meta === tool._meta ? tool : { ...tool, _meta: meta });
  return bridged;
}

/** The tool each bridged tool was made from, for `/mcp`, which serves it as the server wrote it. */
const UPSTREAM_TOOLS = new WeakMap<BridgedTool, Tool>();

/**
 * The tool as MCP serves it: exactly what the server listed, under the exposed name (SPEC §7 —
 * `title`, `description`, schemas, `annotations`, `icons`, `execution`, `_meta` untouched but
 * for the `ui://` view it points at, see app-uris.ts).
 */
export function toMcpTool(tool: BridgedTool): Tool {
  const upstream = UPSTREAM_TOOLS.get(tool);
  if (upstream) return { ...upstream, name: tool.name };
  const { server: _server, originalName: _original, path: _path, deferred: _deferred, stale: _stale, ...fields } = tool;
  return fields as Tool;
}

/** `_meta` key of an error result: the stable code of the failure (SPEC §7). */
export const ERROR_META_KEY = 'switchboard/error';

/**
 * A transport or protocol failure as a tool result the caller's model can read (SPEC §7), with
 * the stable code in `_meta` for programs that branch on it.
 */
export function toolErrorResult(error: ErrorInfo): CallToolResult {
  return {
    content: [{ type: 'text', text: `MCP error: ${error.message}` }],
    isError: true,
    _meta: { [ERROR_META_KEY]: { code: error.code } },
  };
}
