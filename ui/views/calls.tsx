import { millis } from '../format.js';
import { byMinute, byTool } from '../stats.js';
import { calls, CALL_WINDOW_MS, now } from '../state.js';
import { Chart } from './chart.js';

const MINUTES = CALL_WINDOW_MS / 60_000;

/**
 * The Calls view: calls per minute, p50/p99 and errors per server and tool over the last 15
 * minutes: the audit log's calls from before the page opened (call-history.ts), then the feed's
 * `call.finished` events.
 */
export function CallsView() {
  const list = calls.value;
  const minutes = byMinute(list, now.value, MINUTES);
  const rows = byTool(list);
  const servers = [...minutes.perServer.keys()].sort();
  return (
    <section aria-labelledby="calls-title">
      <h2 id="calls-title">Calls</h2>
      <p class="muted">Tool calls, prompt gets and resource reads by minute over the last {MINUTES} minutes (from the audit log, then live).</p>
      <div class="charts">
        <Chart
          title="Calls per minute"
          unit="calls"
          x={minutes.x}
          series={servers.length ? servers.map((s) => ({ label: s, values: minutes.perServer.get(s)! })) : [{ label: 'calls', values: minutes.x.map(() => 0) }]}
        />
        <Chart
          title="Duration p50 / p99"
          unit="ms"
          x={minutes.x}
          series={[
            { label: 'p50', values: minutes.p50 },
            { label: 'p99', values: minutes.p99 },
          ]}
        />
        <Chart
          title="Errors per minute"
          unit="errors"
          x={minutes.x}
          series={servers.length ? servers.map((s) => ({ label: s, values: minutes.errorsPerServer.get(s)! })) : [{ label: 'errors', values: minutes.x.map(() => 0) }]}
        />
      </div>
      <div class="table-wrap">
        <table class="calls">
          <caption>Per server and tool</caption>
          <thead>
            <tr>
              <th scope="col">Server</th>
              <th scope="col">Tool</th>
              <th scope="col">Calls</th>
              <th scope="col">Calls / min</th>
              <th scope="col">Errors</th>
              <th scope="col">p50</th>
              <th scope="col">p99</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={`${row.server}/${row.tool}`} data-tool={row.tool}>
                <td>{row.server || '—'}</td>
                <th scope="row">{row.tool}</th>
                <td>{row.calls}</td>
                <td>{(row.calls / MINUTES).toFixed(2)}</td>
                <td class={row.errors > 0 ? 'bad' : undefined}>{row.errors}</td>
                <td>{row.p50 === null ? '—' : millis(row.p50)}</td>
                <td>{row.p99 === null ? '—' : millis(row.p99)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && <p class="empty">No calls yet.</p>}
    </section>
  );
}
