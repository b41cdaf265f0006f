import { basename, sep } from 'node:path';

/**
 * Placeholder expansion at discovery (SPEC §2), in the spellings the clients write:
 *
 * - `${VAR}`, `${VAR:-default}` (Claude Code, shell): the daemon's environment; `:-` also
 *   applies when the variable is set but empty;
 * - `${env:VAR}` (VS Code, Cursor, Windsurf);
 * - `${workspaceFolder}`, `${workspaceFolderBasename}`, `${userHome}`, `${pathSeparator}` and
 *   `${/}` (VS Code, Cursor): the project directory discovery runs for, the home, the separator;
 * - `$VAR` without braces, only where a client expands it (Gemini CLI), and only when set,
 *   because a bare `$` is also ordinary text.
 *
 * Anything else (`${input:…}`, `${cmd:…}`, an unset variable) stays as written: `${cmd:…}` is
 * resolved just before connecting, and the rest is reported by `unresolvedPlaceholders`.
 */
const BRACED = /\$\{([^{}]*)\}/g;
const BRACED_OR_BARE = /\$\{([^{}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;
const VARIABLE = /^(env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

export type VarSource = Readonly<Record<string, string | undefined>>;

export interface ExpandOptions {
  /** Editor variables (`workspaceFolder`, `userHome`, …); they win over the environment. */
  predefined?: VarSource;
  /** Also expand `$VAR` (Gemini CLI). @default false */
  bareDollar?: boolean;
}

/** The VS Code / Cursor predefined variables for a project directory and a home. */
export function predefinedVars(cwd: string, home: string): VarSource {
  return {
    workspaceFolder: cwd,
    workspaceFolderBasename: basename(cwd),
    userHome: home,
    pathSeparator: sep,
    '/': sep,
  };
}

export function expandVars(value: string, vars: VarSource, options: ExpandOptions = {}): string {
  return value.replace(BRACED_OR_BARE, (whole, inner: string | undefined, bare: string | undefined) => {
    if (bare !== undefined) return options.bareDollar ? (lookup(vars, bare) ?? whole) : whole;
    return expandOne(inner ?? '', vars, options.predefined) ?? whole;
  });
}

function expandOne(inner: string, vars: VarSource, predefined: VarSource | undefined): string | undefined {
  const fixed = predefined ? lookup(predefined, inner) : undefined;
  if (fixed !== undefined) return fixed;
  const match = VARIABLE.exec(inner);
  if (!match) return undefined;
  const [, , name = '', fallback] = match;
  const current = lookup(vars, name);
  if (fallback !== undefined) return current ? current : fallback;
  return current;
}

/** Own string values only: `${constructor}` must not find `Object.prototype.constructor`. */
function lookup(vars: VarSource, name: string): string | undefined {
  const value = Object.hasOwn(vars, name) ? vars[name] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** True when `value` still holds a `${…}` placeholder, e.g. an API key that was never provided. */
export function hasPlaceholder(value: string): boolean {
  return new RegExp(BRACED.source).test(value);
}

/** Every `${…}` left in `value`, as written. */
export function placeholdersIn(value: string): string[] {
  return [...value.matchAll(BRACED)].map((m) => m[0]);
}

/**
 * Expands the string fields of one server entry (command, args, env, cwd, url, headers, the
 * OAuth client id and secret) on a
 * shallow copy. Works on unvalidated input: fields of the wrong type are left for the
 * validator to report.
 */
export function expandEntryStrings<T extends object>(entry: T, vars: VarSource, options: ExpandOptions = {}): T {
  const out: Record<string, unknown> = { ...(entry as Record<string, unknown>) };
  const str = (v: unknown): unknown => (typeof v === 'string' ? expandVars(v, vars, options) : v);
  for (const key of ['command', 'cwd', 'url']) {
    if (key in out) out[key] = str(out[key]);
  }
  if (Array.isArray(out.args)) out.args = out.args.map(str);
  // `${userHome}/notes`: a root written for any machine.
  if (Array.isArray(out.roots)) out.roots = out.roots.map(str);
  // `${userHome}/.cache/…` in a sandbox's allowed paths (issue #42).
  if (isPlainObject(out.sandbox)) {
    const sandbox = { ...out.sandbox };
    for (const key of ['allowRead', 'allowWrite']) if (Array.isArray(sandbox[key])) sandbox[key] = sandbox[key].map(str);
    out.sandbox = sandbox;
  }
  for (const key of ['env', 'headers']) {
    const table = out[key];
    if (isPlainObject(table)) {
      out[key] = Object.fromEntries(Object.entries(table).map(([k, v]) => [k, str(v)]));
    }
  }
  // An OAuth client secret (or id) is as likely to come from a variable as a header value.
  if (isPlainObject(out.oauth)) {
    const oauth = { ...out.oauth };
    for (const key of ['clientId', 'clientSecret', 'privateKeyJwt', 'assertion']) if (key in oauth) oauth[key] = str(oauth[key]);
    out.oauth = oauth;
  }
  return out as T;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
