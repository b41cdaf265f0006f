import type { Tool } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../../config/types.js';

/**
 * A server's tool filter (Gemini `includeTools` / `excludeTools`, Codex `enabled_tools` /
 * `disabled_tools`, Windsurf `disabledTools`, ours): `includeTools`, when set, keeps only the
 * tools it names; `excludeTools` then hides the ones it names, so it wins over `includeTools`,
 * as in Gemini and Codex. Names are the server's own tool names. A hidden tool is not in the
 * catalogue at all, so calling it is `TOOL_NOT_FOUND`, as for a tool that does not exist.
 */
export function filterTools(tools: Tool[], config: Pick<ServerConfig, 'includeTools' | 'excludeTools'>): Tool[] {
  const { includeTools, excludeTools } = config;
  if (includeTools === undefined && (excludeTools === undefined || excludeTools.length === 0)) return tools;
  const include = includeTools === undefined ? undefined : new Set(includeTools);
  const exclude = new Set(excludeTools ?? []);
  return tools.filter((tool) => (include === undefined || include.has(tool.name)) && !exclude.has(tool.name));
}
