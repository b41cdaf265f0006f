import type { PolicyCounts } from '../../gateway/index.js';
import { escapeLabel } from '../../util/prometheus-label.js';

const FAMILIES = [
  ['denied', 'switchboard_policy_denials_total', 'Requests an enforced policy rule refused (POLICY_DENIED), by rule.'],
  ['shadowed', 'switchboard_policy_shadow_denials_total', 'Requests a shadow policy rule would have refused or held, by rule (GET /policies/impact has them by agent and tool).'],
  ['errors', 'switchboard_policy_evaluation_errors_total', "Evaluations of a rule's `when` that failed and so denied (fail closed), by rule."],
] as const;

/** Argument policies on `/metrics` (issue #40): denials, would-be denials and evaluation errors per rule; nothing before the first. */
export function renderPolicyMetrics(counts: PolicyCounts): string[] {
  const lines: string[] = [];
  for (const [field, name, help] of FAMILIES) {
    const byRule = counts[field];
    if (byRule.size === 0) continue;
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
    for (const [rule, n] of byRule) lines.push(`${name}{rule="${escapeLabel(rule)}"} ${n}`);
  }
  return lines;
}
