import { join } from 'node:path';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { PACKAGE_VERSION } from '../../src/http/package-info.js';
import { nextDaemonEvent, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { readPidFile, tempDir, waitForFile } from '../helpers/process.js';

/**
 * Issue #25 item 6: the series an operator alerts on, scraped from a real daemon and read with a
 * real Prometheus text-format parser (so the exposition is valid, not only grep-able).
 */

async function scrape(d: TestDaemon): Promise<Map<string, PrometheusFamily>> {
  const res = await d.fetch('/metrics');
  expect(res.status).toBe(200);
  const families = parsePrometheusTextFormat(await res.text());
  return new Map(families.map((family) => [family.name, family]));
}

/** The value of the one sample of `name` whose labels include `labels`. */
function value(families: Map<string, PrometheusFamily>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  if (!family) throw new Error(`no metric ${name}`);
  const samples = family.metrics.filter((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  if (samples.length !== 1) throw new Error(`${samples.length} samples of ${name} ${JSON.stringify(labels)}`);
  return Number(samples[0]!.value);
}

describe('GET /metrics for operators', () => {
  it('says which server is up and counts its restarts, beside build info, uptime and process metrics', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'echo.pid');
    // Reconnect backoff runs on this clock: the daemon stays "lost" until the test moves it on.
    const clock = new ManualClock();
    const d = await startDaemon({
      servers: { echo: fixtureServerConfig('echo-stdio', { env: { PID_FILE: pidFile } }), broken: { type: 'stdio' } },
      deps: { clock },
    });

    let m = await scrape(d);
    expect(m.get('switchboard_server_up')).toMatchObject({ type: 'GAUGE', help: expect.stringMatching(/connected \(1\) or not \(0/) });
    expect(value(m, 'switchboard_server_up', { server: 'echo' })).toBe(1);
    expect(value(m, 'switchboard_server_up', { server: 'broken' })).toBe(0);
    expect(m.get('switchboard_server_restarts_total')?.type).toBe('COUNTER');
    expect(value(m, 'switchboard_server_restarts_total', { server: 'echo' })).toBe(0);
    expect(m.get('switchboard_build_info')?.metrics).toEqual([{ labels: { version: PACKAGE_VERSION, node: process.version }, value: '1' }]);
    // Uptime: what it measures, said correctly, and a number that moves with real time.
    expect(m.get('switchboard_uptime_seconds')).toMatchObject({ type: 'GAUGE', help: expect.stringMatching(/^Seconds since this daemon started/) });
    const uptime = value(m, 'switchboard_uptime_seconds');
    expect(uptime).toBeGreaterThan(0);
    // prom-client's default process metrics, under their usual names.
    expect(m.get('process_cpu_seconds_total')?.type).toBe('COUNTER');
    expect(value(m, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(value(m, 'process_resident_memory_bytes')).toBeGreaterThan(1024 * 1024);
    expect(value(m, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(value(m, 'process_start_time_seconds')).toBeLessThanOrEqual(Date.now() / 1000);
    expect(m.has('nodejs_heap_size_used_bytes')).toBe(true);

    // The server's process is killed: it is down at once, and back with one restart counted.
    await waitForFile(pidFile);
    const { pid } = await readPidFile(pidFile);
    const lost = nextDaemonEvent(d.daemon, 'server.status', (e) => e.server === 'echo' && e.status === 'reconnecting');
    process.kill(pid, 'SIGKILL');
    await lost;
    m = await scrape(d);
    expect(value(m, 'switchboard_server_up', { server: 'echo' })).toBe(0);
    expect(value(m, 'switchboard_server_restarts_total', { server: 'echo' })).toBe(0);

    const back = nextDaemonEvent(d.daemon, 'server.status', (e) => e.server === 'echo' && e.status === 'connected');
    clock.advance(clock.pendingDelays()[0]!);
    await back;
    m = await scrape(d);
    expect(value(m, 'switchboard_server_up', { server: 'echo' })).toBe(1);
    expect(value(m, 'switchboard_server_restarts_total', { server: 'echo' })).toBe(1);
    expect(value(m, 'switchboard_uptime_seconds')).toBeGreaterThan(uptime);
  });
});
