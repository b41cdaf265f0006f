import { useEffect, useState } from 'preact/hooks';
import { describeError, getJson } from '../api.js';
import type { PolicyWithImpact as Rule } from '../types.js';

/** How far back the sums reach, as `GET /policies/impact?since=` takes it. */
const WINDOWS = [
  ['1 hour', 60 * 60_000],
  ['24 hours', 24 * 60 * 60_000],
  ['since start', Number.POSITIVE_INFINITY],
] as const;

/**
 * The argument policies in force (issue #40), in order, each with what it would have refused in
 * shadow mode beside it: sums by agent × tool, with example ids to find in the log.
 */
export function PoliciesView() {
  const [rules, setRules] = useState<Rule[]>([]);
  const [reach, setReach] = useState<number>(WINDOWS[1][1]);
  const [error, setError] = useState<string | null>(null);
  const [reloads, setReloads] = useState(0);

  useEffect(() => {
    void (async () => {
      try {
        const since = Number.isFinite(reach) ? Date.now() - reach : 0;
        setRules((await getJson<{ rules: Rule[] }>(`/policies/impact?since=${since}`)).rules);
        setError(null);
      } catch (err) {
        setError(describeError(err));
      }
    })();
  }, [reach, reloads]);

  return (
    <section aria-label="Policies">
      <h2>Policies</h2>
      <p>
        <label>
          Would-be denials over{' '}
          <select value={String(reach)} onChange={(e) => setReach(Number((e.target as HTMLSelectElement).value))}>
            {WINDOWS.map(([label, ms]) => (
              <option key={label} value={String(ms)}>
                {label}
              </option>
            ))}
          </select>
        </label>{' '}
        <button type="button" onClick={() => setReloads((n) => n + 1)}>
          Refresh
        </button>
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {rules.length === 0 ? (
        <p class="empty">No policies (add them under "policies" in the config file).</p>
      ) : (
        <ol class="cards">
          {rules.map((rule) => (
            <li key={rule.name} data-policy={rule.name}>
              <strong>{rule.name}</strong> {rule.effect}
              {rule.mode === 'shadow' ? ' (shadow: not enforced)' : ''}
              {rule.reason ? ` — ${rule.reason}` : ''}
              <pre class="json">{rule.when}</pre>
              {rule.mode === 'shadow' &&
                (rule.impact.length === 0 ? (
                  <p class="empty">Would have refused nothing.</p>
                ) : (
                  <table>
                    <thead>
                      <tr>
                        <th>agent</th>
                        <th>tool</th>
                        <th>would have refused</th>
                        <th>last</th>
                        <th>examples</th>
                      </tr>
                    </thead>
                    <tbody>
                      {rule.impact.map((row) => (
                        <tr key={`${row.agent}\0${row.name}`}>
                          <td>{row.agent || 'operator'}</td>
                          <td>{row.name}</td>
                          <td>{row.count}</td>
                          <td>{new Date(row.last).toLocaleString()}</td>
                          <td>
                            <code>{row.examples.join(' ')}</code>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                ))}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
