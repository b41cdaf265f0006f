import { describe, expect, it, onTestFinished } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startFixtureHttp } from '../helpers/fixtures.js';

/**
 * Issue #35 item 3 against a real HTTP upstream (the echo-http fixture, which logs every request
 * to /mcp with the time it arrived): after a 429 with `Retry-After: 2`, nothing at all reaches
 * the server before the pause is over — not the pings (every 100 ms here), not a call made
 * meanwhile, not the re-list a `list_changed` asks for — and the pause is no failure: the server
 * stays `connected`, with no restart. The refused request is a ping: it is the only request in
 * flight then, so every later arrival was sent by a daemon that knew of the pause.
 *
 * Times are the fixture's own clock against the pause it announced: the daemon starts the pause
 * when it reads the 429, never before the fixture wrote it, so an arrival before
 * `refused.at + 2000` can only be a request sent during the pause.
 */

interface Arrival {
  at: number;
  http: string;
  rpc: string | null;
  status?: number;
}

const PAUSE_MS = 2_000;

async function webServer(d: TestDaemon): Promise<{ status: string; restarts: number; traffic: { pausedUntil: string | null } }> {
  return (await d.json<{ status: string; restarts: number; traffic: { pausedUntil: string | null } }>('/servers/web')).body;
}

describe('a pause an HTTP upstream asked for', () => {
  it('holds every request of any kind for the 2 s a refused ping asked for; the server stays connected, 0 restarts', async () => {
    const http = await startFixtureHttp('echo-http');
    onTestFinished(() => http.close());
    const admin = new URL('/admin/', http.url);
    const arrivals = async (): Promise<Arrival[]> => (await (await fetch(new URL('requests', admin))).json()) as Arrival[];
    const d = await startDaemon({ servers: { web: { type: 'http', url: http.url, pingIntervalMs: 100 } } });
    // Pinged every 100 ms: a ping is due many times within the pause.
    await expect.poll(async () => (await arrivals()).filter((a) => a.rpc === 'ping').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);

    await fetch(new URL(`throttle?seconds=${PAUSE_MS / 1000}&method=ping`, admin), { method: 'POST' });
    await expect.poll(async () => (await webServer(d)).traffic.pausedUntil, { timeout: 10_000 }).not.toBeNull();
    // In the pause: a call, and a list_changed that asks for a re-list.
    const call = d.json<{ content?: Array<{ text?: string }> }>('/tools/mcp_web_echo/call', { method: 'POST', body: { arguments: { text: 'held' } } });
    await fetch(new URL('announce', admin), { method: 'POST' });
    const answer = await call;
    expect(answer.status).toBe(200);
    expect(answer.body.content?.[0]?.text).toBe('held');

    const log = await arrivals();
    const refused = log.filter((a) => a.status !== undefined);
    expect(refused).toEqual([expect.objectContaining({ rpc: 'ping', status: 429 })]);
    const pauseEnds = (refused[0] as Arrival).at + PAUSE_MS;
    // The re-list went out too, once the pause was over.
    await expect.poll(async () => (await arrivals()).some((a) => a.rpc === 'tools/list' && a.at >= pauseEnds), { timeout: 10_000 }).toBe(true);

    const after = (await arrivals()).slice(log.indexOf(refused[0] as Arrival) + 1);
    expect(after.filter((a) => a.at < pauseEnds)).toEqual([]);
    // What the pause held: the call, the pings, the re-list — each sent after it.
    expect(after.map((a) => a.rpc)).toEqual(expect.arrayContaining(['tools/call', 'ping', 'tools/list']));
    expect(await webServer(d)).toMatchObject({ status: 'connected', restarts: 0, traffic: { pausedUntil: null } });
  });
});
