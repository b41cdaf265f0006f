/** The one markdown table `npm run bench` prints, and the value formatting it uses. */

export type Verdict = 'met' | 'missed' | 'report';

export interface Row {
  id: string;
  /** What the figure is, e.g. "echo p50, sequential". */
  metric: string;
  /** The median, formatted with its unit. */
  value: string;
  /** The same-run baseline, formatted (its name and value), or "—". */
  baseline: string;
  /** value ÷ baseline (or the difference when the target is additive), or "—". */
  ratio: string;
  /** The target from issue #6, or "—". */
  target: string;
  verdict: Verdict;
}

const VERDICT_MARK: Record<Verdict, string> = { met: '✅ met', missed: '❌ missed', report: '—' };

export function renderTable(rows: readonly Row[]): string {
  const header = ['id', 'metric', 'median', 'baseline (same run)', 'ratio', 'target', 'result'];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i >= 2 && i <= 4 ? '---:' : '---')).join('|')}|`];
  for (const row of rows) {
    const cells = [row.id, row.metric, row.value, row.baseline, row.ratio, row.target, VERDICT_MARK[row.verdict]];
    lines.push(`| ${cells.map(escapeCell).join(' | ')} |`);
  }
  return lines.join('\n');
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** Milliseconds with a precision that suits their size. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) < 1) return `${value.toFixed(3)} ms`;
  if (Math.abs(value) < 100) return `${value.toFixed(2)} ms`;
  return `${Math.round(value)} ms`;
}

export function perSecond(value: number): string {
  return Number.isFinite(value) ? `${Math.round(value).toLocaleString('en-US')}/s` : 'n/a';
}

export function mib(bytes: number): string {
  return Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : 'n/a';
}

export function kib(bytes: number): string {
  return Number.isFinite(bytes) ? `${Math.round(bytes / 1024).toLocaleString('en-US')} KiB` : 'n/a';
}

/** `value ÷ baseline` as "2.31×". */
export function ratio(value: number, baseline: number): string {
  const r = value / baseline;
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : 'n/a';
}

export function verdict(ok: boolean): Verdict {
  return ok ? 'met' : 'missed';
}
