import type { Logger } from 'pino';
import type { DiscoveryResult } from '../config/types.js';

/** One problem discovery reported, as the log shows it. */
interface Issue {
  msg: string;
  fields: { path?: string; server?: string; line?: number; column?: number };
}

/**
 * Every problem of a discovery, one line each: a file that could not be used (bad JSON, an
 * unknown key in Switchboard's own file), an invalid entry (a typo'd `comand`, an unresolved
 * `${input:…}`), an entry kept on its last good config, a setting that needs a restart, an entry
 * shadowed by another or skipped. Keyed by their whole text, so an issue whose reason changed is
 * a new one.
 */
function issuesOf(discovery: DiscoveryResult): Map<string, Issue> {
  const issues = new Map<string, Issue>();
  const add = (issue: Issue): void => void issues.set(JSON.stringify([issue.msg, issue.fields]), issue);
  for (const w of discovery.warnings) {
    add({
      msg: w.message,
      fields: {
        ...(w.path !== undefined ? { path: w.path } : {}),
        ...(w.server !== undefined ? { server: w.server } : {}),
        ...(w.line !== undefined ? { line: w.line, column: w.column ?? 0 } : {}),
      },
    });
  }
  for (const { name, source, shadowedBy, reason } of discovery.shadowed) {
    const why = reason === 'name' ? 'same name' : 'same connection';
    add({
      msg: `server shadowed: "${name}" in ${source.path} is not started; "${shadowedBy.name}" from ${shadowedBy.source.path} wins (${why})`,
      fields: { path: source.path, server: name },
    });
  }
  for (const { name, source, message } of discovery.skipped) {
    add({ msg: `server skipped: ${message}`, fields: { path: source.path, server: name } });
  }
  return issues;
}

/**
 * Puts config problems where an operator looks: the log. Each is logged at `warn` once, when it
 * appears (at start or with the edit that caused it), and again only if it changes; one that goes
 * away is logged at `info` as resolved. A reload that changes nothing logs nothing.
 */
export class DiscoveryIssueLog {
  private shown = new Map<string, Issue>();

  constructor(private readonly log: Pick<Logger, 'warn' | 'info'>) {}

  update(discovery: DiscoveryResult): void {
    const now = issuesOf(discovery);
    for (const [key, issue] of now) {
      if (!this.shown.has(key)) this.log.warn({ component: 'config', ...issue.fields }, issue.msg);
    }
    for (const [key, issue] of this.shown) {
      if (!now.has(key)) this.log.info({ component: 'config', ...issue.fields }, `resolved: ${issue.msg}`);
    }
    this.shown = now;
  }
}
