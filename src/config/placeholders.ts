import { placeholdersIn } from './expand-vars.js';
import type { ServerConfig } from './types.js';

/** `${cmd: …}` (mcp-hub's spelling of our `!cmd`): run just before connecting, like `!cmd`. */
export const CMD_PLACEHOLDER = /\$\{cmd:\s*([^{}]*)\}/g;

/** Fields whose values may hold `${cmd: …}`: the ones `!cmd` works in. */
const COMMAND_FIELDS = new Set(['env', 'headers']);

/**
 * Every placeholder discovery could not resolve, one message per field, naming the key and
 * never the value: a server started with a literal `${input:token}` as its API key fails in a
 * way nobody can diagnose, so such an entry is reported `invalid` instead. `${cmd: …}` in env
 * and header values is left to the value resolver.
 */
export function unresolvedPlaceholders(config: ServerConfig): string[] {
  const problems: string[] = [];
  const check = (field: string, key: string, value: string | undefined): void => {
    if (value === undefined) return;
    const left = placeholdersIn(value).filter((p) => !(COMMAND_FIELDS.has(field) && isCommand(p)));
    if (left.length === 0) return;
    const where = key === '' ? field : `${field}.${key}`;
    problems.push(`unresolved placeholder ${left.map(describe).join(', ')} in ${where}`);
  };
  check('command', '', config.command);
  config.args?.forEach((arg, i) => check('args', String(i), arg));
  check('cwd', '', config.cwd);
  check('url', '', config.url);
  config.roots?.forEach((root, i) => check('roots', String(i), root));
  if (typeof config.sandbox === 'object') {
    config.sandbox.allowRead?.forEach((path, i) => check('sandbox.allowRead', String(i), path));
    config.sandbox.allowWrite?.forEach((path, i) => check('sandbox.allowWrite', String(i), path));
  }
  for (const [key, value] of Object.entries(config.env ?? {})) check('env', key, value);
  for (const [key, value] of Object.entries(config.headers ?? {})) check('headers', key, value);
  return problems;
}

function isCommand(placeholder: string): boolean {
  return new RegExp(`^${CMD_PLACEHOLDER.source}$`).test(placeholder);
}

/** The placeholder and why it is left; a command's text is not repeated, as with `!cmd`. */
function describe(placeholder: string): string {
  if (isCommand(placeholder)) return '${cmd: …} (works in env and headers values only)';
  if (placeholder.startsWith('${input:')) return `${placeholder} (an editor prompt; a daemon cannot answer it)`;
  if (/^\$\{(env:)?[A-Za-z_][A-Za-z0-9_]*\}$/.test(placeholder)) return `${placeholder} (variable not set)`;
  return placeholder;
}
