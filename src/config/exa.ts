import { hasPlaceholder } from './expand-vars.js';
import type { ServerConfig } from './types.js';

/**
 * Exa's hosted MCP server duplicates the web search the host already offers, so it is filtered
 * by default and only its API key is kept (SPEC §2). A server that asks Exa for more than
 * `web_search_exa` is there for those tools and is kept.
 */
const EXA_HOST = /mcp\.exa\.ai/i;
const ONLY_TOOL = 'web_search_exa';

export type ExaVerdict = { filtered: false } | { filtered: true; apiKeys: string[] };

export function exaVerdict(name: string, cfg: ServerConfig): ExaVerdict {
  const args = cfg.args ?? [];
  const isExa = name.toLowerCase() === 'exa' || EXA_HOST.test(cfg.url ?? '') || args.some((a) => EXA_HOST.test(a));
  if (!isExa) return { filtered: false };
  if (requestedTools(cfg).some((tool) => tool !== ONLY_TOOL)) return { filtered: false };
  return { filtered: true, apiKeys: apiKeys(cfg) };
}

/** Tools asked for with `tools=` in a URL (the url or a URL argument) or `--tools[=]` in args. */
function requestedTools(cfg: ServerConfig): string[] {
  const lists: string[] = [];
  const args = cfg.args ?? [];
  for (const text of [cfg.url ?? '', ...args]) {
    const value = queryParam(text, 'tools');
    if (value !== undefined) lists.push(value);
  }
  args.forEach((arg, i) => {
    if (arg === '--tools' && args[i + 1] !== undefined) lists.push(args[i + 1] as string);
    else if (arg.startsWith('--tools=')) lists.push(arg.slice('--tools='.length));
  });
  return lists
    .flatMap((list) => list.split(','))
    .map((t) => t.trim())
    .filter(Boolean);
}

function apiKeys(cfg: ServerConfig): string[] {
  const found = [cfg.url ?? '', ...(cfg.args ?? [])].map((text) => queryParam(text, 'exaApiKey'));
  found.push(cfg.env?.EXA_API_KEY);
  // An unexpanded `${EXA_API_KEY}` is not a key.
  return found.filter((k): k is string => !!k && !hasPlaceholder(k));
}

/** `name=value` in a URL query (or any `?`/`&`-separated text), URL-decoded. */
function queryParam(text: string, name: string): string | undefined {
  const match = new RegExp(`(?:^|[?&])${name}=([^&#\\s]*)`).exec(text);
  if (!match) return undefined;
  try {
    return decodeURIComponent((match[1] ?? '').replace(/\+/g, ' '));
  } catch {
    return match[1];
  }
}
