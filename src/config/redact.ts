import type { ServerConfig } from './types.js';

export const MASK = '****';

/** Query parameters and flags whose value is a secret by its name. */
const SECRET_NAME = /(key|token|secret|password|passwd|auth|credential)/i;
const NAME_VALUE = /([A-Za-z0-9_.-]+)=([^&#\s]+)/g;

/**
 * A copy of `cfg` safe to print: every env and header value masked, and secret-looking
 * `name=value` pieces of the url and args (`?exaApiKey=…`, `--api-key=…`, the word after
 * `--token`) masked too, because people do put keys there.
 */
export function redactServerConfig(cfg: ServerConfig): ServerConfig {
  const out: ServerConfig = { ...cfg };
  if (cfg.env) out.env = maskValues(cfg.env);
  if (cfg.headers) out.headers = maskValues(cfg.headers);
  if (cfg.url) out.url = redactText(cfg.url);
  if (cfg.args) out.args = redactArgs(cfg.args);
  return out;
}

function maskValues(rec: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(rec).map((k) => [k, MASK]));
}

/** `Authorization: Bearer …` written as one argument (mcp-remote's `--header`). */
const HEADER_LIKE = /^([A-Za-z0-9-]+)\s*:\s*\S.*$/;

export function redactText(text: string): string {
  const header = HEADER_LIKE.exec(text);
  if (header && SECRET_NAME.test(header[1] ?? '')) return `${header[1]}: ${MASK}`;
  return text.replace(NAME_VALUE, (whole, name: string) => (SECRET_NAME.test(name) ? `${name}=${MASK}` : whole));
}

function redactArgs(args: readonly string[]): string[] {
  return args.map((arg, i) => {
    const previous = args[i - 1];
    if (previous !== undefined && /^--?[A-Za-z0-9_-]+$/.test(previous) && SECRET_NAME.test(previous)) return MASK;
    return redactText(arg);
  });
}
