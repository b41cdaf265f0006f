import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { jsonOver, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { spawnServe } from '../helpers/serve-process.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir, type Cleanup } from '../helpers/process.js';

/**
 * Issue #35 items 1 and 2 against real processes, with the daemon's default settings (no
 * `maxConcurrentCalls`, no `queueSize`): the `capacity` fixture serves any number of calls at once,
 * or one at a time, and records how deep its own queue ever was. The limiter's and the gate's
 * arithmetic is tested on the manual clock in test/unit/upstream/server/.
 */

type CallBody = { content?: Array<{ text?: string }>; isError?: boolean; error?: { code: string; message: string } };

interface Traffic {
  inFlight: number;
  queued: number;
  limit: number;
  mode: string;
  reason: string;
  limitChangedAt: string | null;
  queueBound: number;
  queueMode: string;
  serviceMs: number | null;
}

/** What the tests ask of a daemon: one in this process, or a `serve` process. */
type Daemon = Pick<TestDaemon, 'json' | 'fetch'>;

function work(d: Daemon, server: string, id: string, serviceMs: number, extra: Record<string, unknown> = {}) {
  return d.json<CallBody>(`/tools/mcp_${server}_work/call`, { method: 'POST', body: { arguments: { id, serviceMs }, ...extra } });
}

async function traffic(d: Daemon, server: string): Promise<Traffic> {
  return (await d.json<{ traffic: Traffic }>(`/servers/${server}`)).body.traffic;
}

async function limitGauge(d: Daemon, server: string): Promise<number> {
  const text = await (await d.fetch('/metrics')).text();
  return Number(new RegExp(`switchboard_upstream_concurrency_limit\\{server="${server}"\\} (\\d+)`).exec(text)?.[1]);
}

/** `<id> <depth>` lines of the fixture's arrivals log, as [id, depth]. */
async function arrivals(dir: string): Promise<Array<[string, number]>> {
  const text = await readFile(join(dir, 'arrivals.log'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, depth] = line.split(' ');
      return [id as string, Number(depth)];
    });
}

/** A daemon in this process with one `capacity` server, `name`, closed (then its folder removed) when the test finishes. */
async function daemonWith(name: string, onTestFinished: Cleanup): Promise<{ d: Daemon; dir: string }> {
  const dir = await tempDir(onTestFinished);
  const d = await startDaemon({ servers: { [name]: fixtureServerConfig('capacity', { env: { WORK_DIR: dir } }) }, lifetime: 'manual' });
  onTestFinished(() => d.close());
  return { d, dir };
}

/**
 * A `switchboard serve` process with one `capacity` server, `name`, killed when the test finishes:
 * for the test that measures latency, so the other test's burst in this process's event loop
 * does not add to what its daemon measures.
 */
async function serveWith(name: string, onTestFinished: Cleanup, env: Record<string, string>): Promise<{ d: Daemon; dir: string }> {
  const dir = await tempDir(onTestFinished);
  const configPath = join(dir, 'switchboard.json');
  await writeFile(configPath, JSON.stringify({ dbPath: join(dir, 'cache.db'), mcpServers: { [name]: fixtureServerConfig('capacity', { env: { WORK_DIR: dir, ...env } }) } }));
  const serve = spawnServe(['--config', configPath, '--port', '0'], { home: dir, cwd: dir }, onTestFinished);
  const url = await serve.listening();
  await serve.waitForLog((e) => e.msg === 'ready');
  const fetchPath = (path: string, init?: RequestInit): Promise<Response> => fetch(url + path, init);
  return { dir, d: { fetch: fetchPath, json: jsonOver(fetchPath) } };
}

// The two tests run side by side: each spends nearly all its time waiting on its server's
// `serviceMs` (about 5 s and 8 s). Being concurrent, each registers its cleanups and asserts
// through its own context.
describe.concurrent('adaptive concurrency and a queue bounded by deadlines (issue #35)', () => {
  it('a server that serves calls in parallel: 200 concurrent 0.5–2 s calls with the default settings all succeed, the limit following the server up past its start of 16', async ({
    expect,
    onTestFinished,
  }) => {
    const { d, dir } = await daemonWith('wide', onTestFinished);
    expect(await traffic(d, 'wide')).toMatchObject({
      limit: 16,
      mode: 'adaptive',
      reason: 'adaptive: starts at 16, before any answer',
      limitChangedAt: null,
      queueBound: 10_000,
      queueMode: 'deadline',
      serviceMs: null,
    });

    // The issue asks for 0.5–6 s; 0.5–2 s proves the same (no refusal, the limit follows the
    // server up) in a third of the time. The 0.5–6 s burst runs on the manual clock in call-gate.test.ts.
    const ids = Array.from({ length: 200 }, (_, i) => String(i));
    const answers = await Promise.all(ids.map((id, i) => work(d, 'wide', id, 500 + ((i * 7_919) % 1_500))));
    expect(answers.map((a) => [a.status, a.body.content?.[0]?.text])).toEqual(ids.map((id) => [200, `done ${id}`]));

    // The limit grew with the answers: more than its start of 16 reached the server at once. How far
    // it grows in real time depends on the box: on a quiet one past 100, at load 15 (three test
    // runs on two cores) to 79, since the latency it follows then includes waiting for a core.
    // "Most of them at once" (at least 150 of 200, 0.5–6 s calls) is asserted where the time is the
    // manual clock's: call-gate.test.ts, against the same CallGate.
    const deepest = Number(await readFile(join(dir, 'max'), 'utf8'));
    expect(deepest).toBeGreaterThan(16);
    const after = await traffic(d, 'wide');
    expect(after).toMatchObject({ mode: 'adaptive', inFlight: 0, queued: 0, reason: expect.stringMatching(/^grew: requests waited/) });
    expect(after.limit).toBeGreaterThan(16);
    expect(after.limitChangedAt).not.toBeNull();
    expect(after.serviceMs).toBeGreaterThanOrEqual(400);
    expect(await limitGauge(d, 'wide')).toBe(after.limit);
  });

  it('a server that serves one call at a time: the limit settles at ≤ 4 within 10 s of calls, its own queue never grows past it, and an unmeetable deadline is refused at once', async ({
    expect,
    onTestFinished,
  }) => {
    const { d, dir } = await serveWith('narrow', onTestFinished, { CAPACITY: '1' });

    // 20 callers, each calling again as soon as it is answered, until 50 calls of 100 ms (5 s of
    // the server's time) are answered; then ten more at a time while the limit is above 4, up to the
    // issue's 10 s. A box at load ~20 (two suites side by side) blurs the latencies the fit sees, and
    // the limit stood at 5 after the first 50 once (stop 58).
    let started = 0;
    const callers = (phase: string, calls: number) =>
      Promise.all(
        Array.from({ length: 20 }, async () => {
          while (started < calls) {
            const id = `${phase}-${started++}`;
            const answer = await work(d, 'narrow', id, 100);
            expect([answer.status, answer.body.content?.[0]?.text]).toEqual([200, `done ${id}`]);
          }
        }),
      );
    await callers('warm', 50);
    for (let calls = 50; calls < 100 && (await traffic(d, 'narrow')).limit > 4; calls += 10) await callers('warm', calls + 10);
    const settled = await traffic(d, 'narrow');
    expect(settled.limit).toBeLessThanOrEqual(4);
    // Its last move was a cut for the rise, or a step back up that the rise still allows.
    expect(settled.reason).toMatch(/^shrank: latency rises with concurrency|^grew: requests waited and latency stays within 3× one alone/);
    expect(await limitGauge(d, 'narrow')).toBe(settled.limit);

    // Another 30 calls from 20 callers: the server never holds more than 4 of them.
    started = 0;
    await callers('steady', 30);
    const steady = (await arrivals(dir)).filter(([id]) => id.startsWith('steady-'));
    expect(steady).toHaveLength(30);
    expect(Math.max(...steady.map(([, depth]) => depth))).toBeLessThanOrEqual(4);
    expect((await traffic(d, 'narrow')).limit).toBeLessThanOrEqual(4);

    // Held: calls finish only once `hold` is gone (then at once). 40 calls: at most 4 at the
    // server, the rest wait here.
    await writeFile(join(dir, 'hold'), '');
    const held = Array.from({ length: 40 }, (_, i) => work(d, 'narrow', `held-${i}`, 1));
    await expect
      .poll(
        async () => {
          const now = await traffic(d, 'narrow');
          return now.inFlight + now.queued;
        },
        { timeout: 10_000 },
      )
      .toBe(40);
    const queue = await traffic(d, 'narrow');
    const expectedMs = (queue.queued * (queue.serviceMs as number)) / queue.limit;
    expect(expectedMs).toBeGreaterThan(1_000);

    // A deadline a third of the expected wait: refused at once. Nothing ahead of it can finish
    // while `hold` exists, so a call that had been queued instead could only end at its deadline,
    // as TOOL_CALL_TIMEOUT; SERVER_BUSY comes only from the refusal at the door.
    const refused = await work(d, 'narrow', 'hopeless', 100, { timeoutMs: Math.floor(expectedMs / 3) });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'SERVER_BUSY', message: expect.stringMatching(/longer than the \d+ ms left of this request's deadline$/) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await traffic(d, 'narrow')).toMatchObject({ queued: queue.queued });

    // One that can wait that long waits in line.
    const patient = work(d, 'narrow', 'patient', 1, { timeoutMs: 60_000 });
    await expect.poll(async () => (await traffic(d, 'narrow')).queued, { timeout: 10_000 }).toBe(queue.queued + 1);
    await rm(join(dir, 'hold'));
    const answers = await Promise.all([...held, patient]);
    expect(answers.map((a) => a.status)).toEqual(Array(41).fill(200));
    const ids = (await arrivals(dir)).map(([id]) => id);
    expect(ids).not.toContain('hopeless');
    expect(ids).toContain('patient');
  });
});
