import type { TestDaemon } from './daemon.js';

/**
 * The value of one series on `/metrics`, e.g.
 * `switchboard_tool_calls_total{transport="mcp",server="echo",tool="mcp_echo_add",outcome="ok"}`;
 * 0 when the series is not there yet. A test on a daemon shared with other tests asserts the
 * change it made (after − before), which is exactly what it did, whatever ran before it.
 */
export async function metricValue(d: Pick<TestDaemon, 'fetch'>, series: string): Promise<number> {
  const text = await (await d.fetch('/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}
