/**
 * What may be shown of a PostgreSQL URL: never its password. Used for every log line, error and
 * `/status` warning that names the store.
 */

/** The URL with its password replaced by `***` (a URL that does not parse is replaced whole). */
export function maskDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://***';
  }
}

/** `host:port/database`, the way errors name the store (no user, no password). */
export function databaseTarget(url: string): string {
  try {
    const parsed = new URL(url);
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || '(default database)';
    return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}/${database}`;
  } catch {
    return '(unparsable URL)';
  }
}

/** True for the URLs the `store` setting selects PostgreSQL with. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** `text` with any occurrence of the URL's password masked: a driver message may echo it. */
export function withoutPassword(text: string, url: string): string {
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    return text;
  }
  return password.length > 0 ? text.split(password).join('***') : text;
}
