import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Client, type CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAgentKey, AGENT_ERAS, agentClient, OPERATOR_TOKEN } from '../helpers/agents.js';
import { nextDaemonEvent, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir, waitForFile } from '../helpers/process.js';
import { cleanupStack } from '../helpers/shared.js';
import { deferred } from '../../src/util/deferred.js';

/**
 * Issue #39 items 1–3: code mode against one real daemon with two echo fixtures (`a`, `b`) and the
 * slow fixture, real SDK clients of both eras and REST. Each script runs in QuickJS (WebAssembly)
 * in a worker thread; each of its calls goes through the gateway's one request path.
 */

const ERAS = AGENT_ERAS;
const SUM_SCRIPT = `
const s = await tools.call('mcp_a_add', { a: 2, b: 3 });
const [r, e] = await Promise.all([tools.call('mcp_b_reverse', { text: '21' }), tools.call('mcp_b_echo', { text: '100' })]);
console.log('parts', s.sum, r, e);
return s.sum + r + e;`;

let d: TestDaemon;
let dir: string;
let coder: string;
let searcher: string;
let reader: string;
let narrow: string;
let held: string;
let plain: string;

// A hook registered from inside `beforeAll` never runs: the folder's removal is kept here and run
// by the file's `afterAll`, after the daemon that writes into it has closed.
const folder = cleanupStack();

beforeAll(async () => {
  dir = await tempDir(folder.cleanup);
  d = await startDaemon({
    servers: {
      a: fixtureServerConfig('echo-stdio'),
      b: fixtureServerConfig('echo-stdio'),
      slow: fixtureServerConfig('slow-tool', { env: { CANCEL_MARKER: join(dir, 'cancelled') } }),
    },
    config: { token: OPERATOR_TOKEN, health: false, codeMode: true, scripts: { maxRuns: 8 } },
    lifetime: 'manual',
  });
  coder = await addAgentKey(d, { name: 'coder', catalogue: 'full' });
  searcher = await addAgentKey(d, { name: 'searcher', catalogue: 'search' });
  reader = await addAgentKey(d, { name: 'reader', access: 'read' });
  narrow = await addAgentKey(d, { name: 'narrow', servers: ['a'] });
  held = await addAgentKey(d, { name: 'held', requireApproval: ['mcp_b_reverse'] });
  plain = await addAgentKey(d, { name: 'plain', codeMode: false });
});
afterAll(async () => {
  await d.close();
  await folder.run();
});

const mcp = (key: string, era?: (typeof ERAS)[number][1]): Promise<Client> => agentClient(d, key, era);

interface RunBody {
  runId: string;
  calls: number;
  value?: unknown;
  logs: string[];
  error?: { code: string; message: string; line?: number };
}

async function run(key: string, code: string, timeoutMs?: number): Promise<{ status: number; body: RunBody & { error?: { code: string; message: string } } }> {
  const res = await fetch(`${d.url}/scripts/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ code, ...(timeoutMs !== undefined ? { timeoutMs } : {}) }),
  });
  return { status: res.status, body: (await res.json()) as RunBody };
}

const textOf = (result: CallToolResult): string => result.content.map((item) => (item.type === 'text' ? item.text : '')).join('');
const runOf = (result: CallToolResult) => result._meta?.['switchboard/run'] as { id: string; calls: number };

describe('run_script on /mcp', () => {
  it.each(ERAS)('calls three tools on two servers and returns only the number, three audit rows with its run id (a %s client)', async (_name, era) => {
    const client = await mcp(coder, era);
    const result = (await client.callTool({ name: 'run_script', arguments: { code: SUM_SCRIPT } })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toBe('117\n\nconsole:\nparts 5 12 100');
    const { id, calls } = runOf(result);
    expect(calls).toBe(3);
    const audit = await d.json<{ entries: Array<{ name: string; runId: string; agent: string; outcome: string }> }>(`/audit?runId=${id}`);
    expect(audit.body.entries.map((entry) => entry.name).sort()).toEqual(['mcp_a_add', 'mcp_b_echo', 'mcp_b_reverse']);
    expect(audit.body.entries.every((entry) => entry.runId === id && entry.agent === 'coder' && entry.outcome === 'ok')).toBe(true);
  });

  it.each(ERAS)('is listed in full and in search mode to an agent with code mode, never to one without (a %s client)', async (_name, era) => {
    const names = async (key: string) => (await (await mcp(key, era)).listTools()).tools.map((tool) => tool.name);
    expect(await names(coder)).toContain('run_script');
    expect(await names(searcher)).toEqual(['search_tools', 'describe_tools', 'call_tool', 'run_script']);
    expect(await names(plain)).not.toContain('run_script');
    const viaSearch = (await (
      await mcp(searcher, era)
    ).callTool({ name: 'run_script', arguments: { code: 'return (await tools.search("reverse text")).map((t) => t.name).includes("mcp_a_reverse")' } })) as CallToolResult;
    expect(textOf(viaSearch)).toBe('true');
  });

  it('refuses code mode to an agent with it off: CODE_MODE_DISABLED on REST and /mcp', async () => {
    const refused = await run(plain, 'return 1');
    expect(refused.status).toBe(403);
    expect(refused.body.error?.code).toBe('CODE_MODE_DISABLED');
    await expect((await mcp(plain)).callTool({ name: 'run_script', arguments: { code: 'return 1' } })).rejects.toThrow(/Code mode is off/);
  });

  it('answers a thrown error and a syntax error as isError results with the script line', async () => {
    const client = await mcp(coder);
    const thrown = (await client.callTool({ name: 'run_script', arguments: { code: 'const a = 1;\nconsole.log("before");\nthrow new Error("boom " + a);' } })) as CallToolResult;
    expect(thrown.isError).toBe(true);
    expect(textOf(thrown)).toBe('SCRIPT_ERROR (line 3): Error: boom 1\n\nconsole:\nbefore');
    const syntax = (await client.callTool({ name: 'run_script', arguments: { code: 'let a = 1;\nlet b = ;' } })) as CallToolResult;
    expect(thrown._meta?.['switchboard/error']).toEqual({ code: 'SCRIPT_ERROR', line: 3 });
    expect(syntax._meta?.['switchboard/error']).toEqual({ code: 'SCRIPT_ERROR', line: 2 });
    expect(textOf(syntax)).toMatch(/^SCRIPT_ERROR \(line 2\): SyntaxError/);
  });
});

describe('POST /scripts/run', () => {
  it('answers {runId, calls, value, logs}', async () => {
    const { status, body } = await run(coder, SUM_SCRIPT);
    expect(status).toBe(200);
    expect(body).toMatchObject({ calls: 3, value: 117, logs: ['parts 5 12 100'] });
    expect(body.runId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('gives a script no Node API, module loader, fetch or timers', async () => {
    const { body } = await run(
      coder,
      'const kinds = [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof globalThis.Buffer];\nlet imported;\ntry { await import("node:fs"); imported = "yes"; } catch (err) { imported = String(err); }\nreturn { kinds, imported };',
    );
    expect(body.value).toEqual({ kinds: ['undefined', 'undefined', 'undefined', 'undefined', 'undefined'], imported: "ReferenceError: could not load module 'node:fs'" });
  });

  it('bounds the output: a value over the limit is SCRIPT_OUTPUT_TOO_LARGE, console lines past it are dropped', async () => {
    const { body } = await run(coder, 'console.log("x".repeat(60000));\nconsole.log("y".repeat(60000));\nreturn "z".repeat(200000);');
    expect(body.error?.code).toBe('SCRIPT_OUTPUT_TOO_LARGE');
    expect(body.logs).toEqual(['x'.repeat(60000)]);
    expect(body).toMatchObject({ logsCut: true });
  });

  it('stops a memory bomb at the memory limit', async () => {
    // Not strings: QuickJS concatenates them as ropes, which hit the length limit first.
    const objects = await run(coder, 'const kept = [];\nfor (let i = 0;; i++) kept.push({ i, s: "x" + i });');
    expect(objects.body.error).toEqual({ code: 'SCRIPT_MEMORY_LIMIT', message: 'The script ran out of its memory limit', line: 2 });
    // ArrayBuffers are outside QuickJS's own count: the capped WebAssembly memory stops them.
    const buffers = await run(coder, 'const kept = [];\nfor (;;) kept.push(new Uint8Array(1 << 20));');
    expect(buffers.body.error?.code).toBe('SCRIPT_MEMORY_LIMIT');
  });

  it('stops while(true) at its time limit, and REST calls made meanwhile are answered while it still runs', async () => {
    const started = join(dir, 'spinning');
    let ended = false;
    // The call's message leaves the worker just before the loop starts: once the fixture writes
    // startedFile, the worker is spinning. Its limit is the daemon's longest (30 s), so that the
    // REST answers below come in while it spins however slow the box; the client then goes away.
    const abort = new AbortController();
    const busy = fetch(`${d.url}/scripts/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${coder}`, 'content-type': 'application/json' },
      body: JSON.stringify({ code: `void tools.call("mcp_slow_slow", { durationMs: 60000, startedFile: ${JSON.stringify(started)} });\nwhile (true) {}` }),
      signal: abort.signal,
    })
      .catch((err: unknown) => err)
      .finally(() => {
        ended = true;
      });
    await waitForFile(started, AbortSignal.timeout(10_000));
    const listed = (await d.json<{ scripts: Array<{ agent: string; calls: number }> }>('/scripts')).body.scripts;
    expect(listed).toMatchObject([{ agent: 'coder', calls: 1 }]);
    for (let i = 0; i < 20; i++) expect((await d.fetch('/health')).status).toBe(200);
    // Twenty-one REST answers came back, and the script is still running: the spinning is not on the daemon's loop.
    expect(ended).toBe(false);
    abort.abort();
    expect(await busy).toBeInstanceOf(Error);

    // The limit ends a spinning script: a short one, so the test does not wait for 30 s.
    const { body } = await run(coder, 'while (true) {}', 300);
    expect(body.error?.code).toBe('SCRIPT_TIMEOUT');
    expect((await d.json<{ scripts: unknown[] }>('/scripts')).body.scripts).toEqual([]);
  });

  it("GET /scripts is the operator's", async () => {
    const res = await fetch(`${d.url}/scripts`, { headers: { authorization: `Bearer ${coder}` } });
    expect(res.status).toBe(403);
  });
});

describe('inner calls take the request path', () => {
  it('a call outside the view fails inside the script as an unknown tool does', async () => {
    const { body } = await run(narrow, 'try { await tools.call("mcp_b_echo", { text: "x" }); } catch (err) { return [err.code, err.message]; }');
    const direct = await fetch(`${d.url}/tools/mcp_b_echo/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${narrow}`, 'content-type': 'application/json' },
      body: '{"arguments":{"text":"x"}}',
    });
    const directBody = (await direct.json()) as { error: { code: string; message: string } };
    expect(body.value).toEqual([directBody.error.code, directBody.error.message]);
    expect(directBody.error.code).toBe('TOOL_NOT_FOUND');
    const tools = (await run(narrow, 'return tools.list().map((t) => t.name)')).body.value as string[];
    expect(tools.every((name) => name.startsWith('mcp_a_'))).toBe(true);
  });

  it("a read-access agent's script cannot call a write tool, and can call a read-only one", async () => {
    const { body } = await run(
      reader,
      'const r = await tools.call("mcp_a_reverse", { text: "ab" });\ntry { await tools.call("mcp_a_echo", { text: "x" }); return "wrote"; } catch (err) { return [r, err.code]; }',
    );
    expect(body.value).toEqual(['ba', 'TOOL_NOT_FOUND']);
  });

  it('an approval-held tool holds the script until the operator approves', async () => {
    const requested = nextDaemonEvent(d.daemon, 'approval.requested');
    const running = run(held, 'const r = await tools.call("mcp_b_reverse", { text: "held" });\nreturn r;');
    const { id } = await requested;
    expect((await d.json<{ scripts: Array<{ agent: string; calls: number }> }>('/scripts')).body.scripts).toMatchObject([{ agent: 'held', calls: 1 }]);
    await d.json(`/approvals/${id}/approve`, { method: 'POST' });
    expect((await running).body.value).toBe('dleh');
  });

  it('more calls than a run may make fail with SCRIPT_CALL_LIMIT', async () => {
    const { body } = await run(coder, 'let n = 0;\ntry { for (;;) { await tools.call("mcp_a_reverse", { text: "x" }); n++; } } catch (err) { return [n, err.code]; }');
    expect(body.value).toEqual([100, 'SCRIPT_CALL_LIMIT']);
  });
});

describe('admission and cancellation', () => {
  it('20 scripts at once: as many run as the daemon allows (8), the rest are SERVER_BUSY; per agent at most 4', async () => {
    const until = join(dir, 'go');
    const hold = `return await tools.call("mcp_slow_slow", { durationMs: 60000, untilFile: ${JSON.stringify(until)} });`;
    const refusals = (runs: Array<ReturnType<typeof run>>, count: number): Promise<void> => {
      let seen = 0;
      const all = deferred<void>();
      for (const r of runs) void r.then(({ status, body }) => status === 429 && body.error?.code === 'SERVER_BUSY' && ++seen === count && all.resolve());
      return all.promise;
    };
    // An agent's six: four run, two are refused at once.
    const coders = Array.from({ length: 6 }, () => run(coder, hold));
    await refusals(coders, 2);
    // Twenty of the operator's: the daemon runs eight in all, so four more run and sixteen are refused.
    const operators = Array.from({ length: 20 }, () => run(OPERATOR_TOKEN, hold));
    await refusals(operators, 16);
    const scripts = (await d.json<{ scripts: Array<{ agent?: string }> }>('/scripts')).body.scripts;
    expect(scripts).toHaveLength(8);
    expect(scripts.filter((s) => s.agent === 'coder')).toHaveLength(4);
    await writeFile(until, 'go');
    const outcomes = await Promise.all([...coders, ...operators]);
    expect(outcomes.filter((r) => r.status === 200).map((r) => r.body.calls)).toEqual(Array(8).fill(1));
    expect(outcomes.filter((r) => r.status !== 200).map((r) => r.body.error?.code)).toEqual(Array(18).fill('SERVER_BUSY'));
  });

  it('the client cancelling run_script stops the script and its in-flight call upstream', async () => {
    const client = await mcp(coder);
    const abort = new AbortController();
    const started = join(dir, 'started');
    // The time-limit test's call was cancelled too: this test reads a fresh marker.
    await rm(join(dir, 'cancelled'), { force: true });
    const call = client.callTool(
      { name: 'run_script', arguments: { code: `await tools.call("mcp_slow_slow", { durationMs: 60000, startedFile: ${JSON.stringify(started)} }); return "finished";` } },
      { signal: abort.signal },
    );
    const settled = call.then(
      () => 'resolved',
      () => 'rejected',
    );
    await waitForFile(started, AbortSignal.timeout(10_000));
    abort.abort(new Error('agent gave up'));
    expect(await settled).toBe('rejected');
    expect(await waitForFile(join(dir, 'cancelled'), AbortSignal.timeout(10_000))).not.toBe('');
  });
});

describe('cancellation over REST', () => {
  it('a REST client going away stops the script and its in-flight call upstream', async () => {
    const started = join(dir, 'rest-started');
    await rm(join(dir, 'cancelled'), { force: true });
    const abort = new AbortController();
    const request = fetch(`${d.url}/scripts/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${coder}`, 'content-type': 'application/json' },
      body: JSON.stringify({ code: `await tools.call("mcp_slow_slow", { durationMs: 60000, startedFile: ${JSON.stringify(started)} }); return "finished";` }),
      signal: abort.signal,
    }).catch((err: unknown) => err);
    await waitForFile(started, AbortSignal.timeout(10_000));
    abort.abort();
    expect(await request).toBeInstanceOf(Error);
    expect(await waitForFile(join(dir, 'cancelled'), AbortSignal.timeout(10_000))).not.toBe('');
    expect((await d.json<{ scripts: unknown[] }>('/scripts')).body.scripts).toEqual([]);
  });
});
