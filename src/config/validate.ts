import type { ServerConfig, TransportKind } from './types.js';

/** The exact messages of SPEC §3, exported so callers and tests never retype them. */
export const BOTH_COMMAND_AND_URL = 'both "command" and "url" are set';
export const STDIO_NEEDS_COMMAND = 'stdio server needs a "command"';
export const HTTP_NEEDS_URL = 'http server needs a "url"';
export const SSE_NEEDS_URL = 'sse server needs a "url"';
export const EMPTY_SERVER_NAME = 'server name is empty';
export const URL_NOT_HTTP = '"url" must be an http(s) URL';
/** A sandbox confines a process Switchboard starts (issue #42); an http/sse server is not one. */
export const SANDBOX_NEEDS_STDIO = '"sandbox" applies to stdio servers only: an http/sse server runs outside Switchboard';

export function unknownTypeMessage(type: string): string {
  return `unknown type "${type}" (expected stdio, http or sse)`;
}

const KINDS: readonly string[] = ['stdio', 'http', 'sse'] satisfies TransportKind[];

/**
 * The transport an entry uses: its `type` when that is a known kind, else `http` when only a
 * `url` is set, else `stdio`. Undefined when `type` names something we cannot speak.
 */
export function resolveTransportKind(cfg: ServerConfig): TransportKind | undefined {
  if (cfg.type !== undefined) {
    return KINDS.includes(cfg.type) ? (cfg.type as TransportKind) : undefined;
  }
  return cfg.url && !cfg.command ? 'http' : 'stdio';
}

/** Every problem that stops `cfg` from connecting; empty when it can be tried. */
export function validateServerConfig(name: string, cfg: ServerConfig): string[] {
  const errors: string[] = [];
  if (name.trim() === '') errors.push(EMPTY_SERVER_NAME);
  if (cfg.command && cfg.url) errors.push(BOTH_COMMAND_AND_URL);

  const kind = resolveTransportKind(cfg);
  if (kind === undefined) {
    errors.push(unknownTypeMessage(String(cfg.type)));
  } else if (kind === 'stdio') {
    if (!cfg.command) errors.push(STDIO_NEEDS_COMMAND);
  } else if (!cfg.url) {
    errors.push(kind === 'http' ? HTTP_NEEDS_URL : SSE_NEEDS_URL);
  } else if (!isHttpUrl(cfg.url)) {
    errors.push(URL_NOT_HTTP);
  }
  if (kind !== undefined && kind !== 'stdio' && cfg.sandbox !== undefined && cfg.sandbox !== false) errors.push(SANDBOX_NEEDS_STDIO);
  return errors;
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
