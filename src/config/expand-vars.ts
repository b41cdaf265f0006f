/**
 * `${VAR}` and `${VAR:-default}` expansion (SPEC §2). `${env:VAR}` is accepted too because
 * VS Code and Windsurf write it that way. A placeholder whose variable is unset (and has no
 * default) stays as written, so the problem is visible downstream instead of becoming "".
 */
const PLACEHOLDER = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type VarSource = Readonly<Record<string, string | undefined>>;

export function expandVars(value: string, vars: VarSource): string {
  return value.replace(PLACEHOLDER, (whole, name: string, fallback: string | undefined) => {
    const current = vars[name];
    // Shell semantics: `:-` also applies when the variable is set but empty.
    if (fallback !== undefined) return current ? current : fallback;
    return current ?? whole;
  });
}

/** True when `value` still holds a placeholder, e.g. an API key that was never provided. */
export function hasPlaceholder(value: string): boolean {
  return new RegExp(PLACEHOLDER.source).test(value);
}

/**
 * Expands the string fields of one server entry (command, args, env, cwd, url, headers, the
 * OAuth client id and secret) on a
 * shallow copy. Works on unvalidated input: fields of the wrong type are left for the
 * validator to report.
 */
export function expandEntryStrings<T extends object>(entry: T, vars: VarSource): T {
  const out: Record<string, unknown> = { ...(entry as Record<string, unknown>) };
  const str = (v: unknown): unknown => (typeof v === 'string' ? expandVars(v, vars) : v);
  for (const key of ['command', 'cwd', 'url']) {
    if (key in out) out[key] = str(out[key]);
  }
  if (Array.isArray(out.args)) out.args = out.args.map(str);
  for (const key of ['env', 'headers']) {
    const table = out[key];
    if (isPlainObject(table)) {
      out[key] = Object.fromEntries(Object.entries(table).map(([k, v]) => [k, str(v)]));
    }
  }
  // An OAuth client secret (or id) is as likely to come from a variable as a header value.
  if (isPlainObject(out.oauth)) {
    const oauth = { ...out.oauth };
    for (const key of ['clientId', 'clientSecret']) if (key in oauth) oauth[key] = str(oauth[key]);
    out.oauth = oauth;
  }
  return out as T;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
