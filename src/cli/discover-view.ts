import { describeOutcome } from '../config/describe-outcome.js';
import { redactServerConfig } from '../config/redact.js';
import type { DiscoveryReport, OutcomeStatus, ServerOutcome } from '../config/types.js';

const STATUSES: readonly OutcomeStatus[] = ['active', 'shadowed', 'skipped', 'disabled', 'filtered', 'invalid'];

/**
 * `discover --json`: every entry with its masked config, every warning, and the Exa keys only
 * as a count. Nothing here may print a secret: env and header values are `****`.
 */
export function discoverJson(report: DiscoveryReport, cwd: string): string {
  const view = {
    cwd,
    configPath: report.configPath,
    counts: countByStatus(report.outcomes),
    servers: report.outcomes.map(serverView),
    warnings: report.warnings,
    exaApiKeyCount: report.exaApiKeys.length,
  };
  return `${JSON.stringify(view, null, 2)}\n`;
}

function serverView(o: ServerOutcome): Record<string, unknown> {
  const detail: Record<string, unknown> = {};
  if (o.status === 'shadowed') Object.assign(detail, { reason: o.reason, shadowedBy: o.shadowedBy });
  if (o.status === 'disabled' || o.status === 'filtered') detail.reason = o.reason;
  if (o.status === 'skipped') Object.assign(detail, { reason: o.reason, message: o.message });
  if (o.status === 'invalid') detail.errors = o.errors;
  return {
    name: o.name,
    status: o.status,
    ...detail,
    outcome: describeOutcome(o),
    transport: o.transport ?? null,
    source: o.source,
    config: redactServerConfig(o.config),
  };
}

/** The human table: one row per entry, then the counts and every warning. */
export function discoverTable(report: DiscoveryReport, cwd: string): string {
  const rows = report.outcomes.map((o) => [o.name, o.transport ?? '?', `${o.source.providerName} (${o.source.level})`, o.source.path, describeOutcome(o)]);
  const lines = [`Project: ${cwd}`, `Switchboard config: ${report.configPath}`, ''];
  if (rows.length === 0) lines.push('No MCP servers found.');
  else lines.push(...formatTable(['NAME', 'TRANSPORT', 'SOURCE', 'PATH', 'OUTCOME'], rows));

  const counts = countByStatus(report.outcomes);
  lines.push('', STATUSES.map((s) => `${counts[s]} ${s}`).join(', '));
  if (report.exaApiKeys.length > 0) lines.push(`Exa API keys found: ${report.exaApiKeys.length} (not shown)`);
  if (report.warnings.length > 0) {
    lines.push('', `Warnings (${report.warnings.length}):`, ...report.warnings.map((w) => `  - ${w.message}`));
  }
  return `${lines.join('\n')}\n`;
}

function countByStatus(outcomes: readonly ServerOutcome[]): Record<OutcomeStatus, number> {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<OutcomeStatus, number>;
  for (const o of outcomes) counts[o.status]++;
  return counts;
}

/** Left-aligned columns; the last one is not padded so long outcomes do not add trailing space. */
function formatTable(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
}
