import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { nextEvent, openEvents, received } from '../helpers/events.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { sharedByTests } from '../helpers/shared.js';
import { tempDir } from '../helpers/process.js';
import { openToolCache } from '../../src/store/open-tool-cache.js';
import type { AuditEntry } from '../../src/store/ports.js';

/**
 * Issue #22 item 4: every tool call, prompt get and resource read — over REST and `/mcp` — is
 * an audit row (who, what, outcome and code, duration, sizes), readable with `GET /audit`, and a
 * `call.finished` event on the feed. Argument values only with `audit.arguments: true`, and then
 * with the configured secret values masked.
 */

const SECRET = 'sk-live-4f9a8b7c6d5e';

interface Row {
  id: number;
  time: string;
  agent?: string;
  transport: string;
  server: string;
  kind: string;
  name: string;
  outcome: string;
  code?: string;
  durationMs: number;
  argBytes: number;
  resultBytes: number;
  arguments?: string;
}

async function auditRows(d: TestDaemon, query = ''): Promise<Row[]> {
  const res = await d.json<{ entries: Row[] }>(`/audit${query}`);
  expect(res.status).toBe(200);
  return res.body.entries;
}

/** The prompt and resource server of `daemonWith`: one rich-http fixture for the file, a session per daemon. */
const richHttp = sharedByTests(
  () => startFixtureHttp('rich-http', { env: { ERA: 'legacy' } }),
  (http) => http.close(),
);

async function daemonWith(audit: Record<string, unknown> = {}): Promise<TestDaemon> {
  return startDaemon({
    servers: {
      echo: fixtureServerConfig('echo-stdio', { env: { ECHO_API_KEY: SECRET } }),
      rich: { type: 'http', url: (await richHttp()).url },
    },
    config: { audit },
  });
}

/**
 * A daemon with `audit.arguments: true`, shared by the tests that read only their own rows or
 * events (the newest row, an agent's rows, the next call.finished), never the whole log.
 */
const withArguments = sharedByTests(
  async () =>
    startDaemon({
      servers: { echo: fixtureServerConfig('echo-stdio', { env: { ECHO_API_KEY: SECRET } }), rich: { type: 'http', url: (await richHttp()).url } },
      config: { audit: { arguments: true } },
      lifetime: 'manual',
    }),
  (d) => d.close(),
);

async function mcpAgent(d: TestDaemon, mode: 'legacy' | { pin: string }): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url)));
  onTestFinished(() => client.close());
  return client;
}

const call = (d: TestDaemon, tool: string, args: unknown) => d.json(`/tools/${tool}/call`, { method: 'POST', body: { arguments: args } });

describe('audit rows', () => {
  it('records allowed, failed and unknown calls, prompt gets and resource reads, over REST and /mcp in both eras', async () => {
    const d = await daemonWith();
    const args = { text: 'hello' };
    expect((await call(d, 'mcp_echo_echo', args)).status).toBe(200);
    // The tool itself answers isError (its input does not validate).
    expect((await call(d, 'mcp_echo_add', { a: 'x' })).body).toMatchObject({ isError: true });
    expect((await call(d, 'mcp_nope_x', {})).status).toBe(404);
    expect((await d.json('/prompts/mcp_rich_greet/get', { method: 'POST', body: { arguments: { name: 'Ada' } } })).status).toBe(200);
    expect((await d.json(`/resources/read?uri=${encodeURIComponent('fixture://static/hello')}`)).status).toBe(200);
    for (const mode of ['legacy', { pin: '2026-07-28' }] as const) {
      const agent = await mcpAgent(d, mode);
      await agent.callTool({ name: 'mcp_echo_reverse', arguments: { text: 'abc' } });
      await expect(agent.callTool({ name: 'mcp_echo_missing', arguments: {} })).rejects.toThrow();
    }

    const rows = (await auditRows(d)).reverse();
    const summary = rows.map(({ transport, server, kind, name, outcome, code }) => ({ transport, server, kind, name, outcome, ...(code ? { code } : {}) }));
    expect(summary).toEqual([
      { transport: 'rest', server: 'echo', kind: 'tools/call', name: 'mcp_echo_echo', outcome: 'ok' },
      { transport: 'rest', server: 'echo', kind: 'tools/call', name: 'mcp_echo_add', outcome: 'error' },
      { transport: 'rest', server: '', kind: 'tools/call', name: 'mcp_nope_x', outcome: 'not_found', code: 'TOOL_NOT_FOUND' },
      { transport: 'rest', server: 'rich', kind: 'prompts/get', name: 'mcp_rich_greet', outcome: 'ok' },
      { transport: 'rest', server: 'rich', kind: 'resources/read', name: 'fixture://static/hello', outcome: 'ok' },
      { transport: 'mcp', server: 'echo', kind: 'tools/call', name: 'mcp_echo_reverse', outcome: 'ok' },
      { transport: 'mcp', server: '', kind: 'tools/call', name: 'mcp_echo_missing', outcome: 'not_found', code: 'TOOL_NOT_FOUND' },
      { transport: 'mcp', server: 'echo', kind: 'tools/call', name: 'mcp_echo_reverse', outcome: 'ok' },
      { transport: 'mcp', server: '', kind: 'tools/call', name: 'mcp_echo_missing', outcome: 'not_found', code: 'TOOL_NOT_FOUND' },
    ]);
    const first = rows[0]!;
    expect(first.argBytes).toBe(Buffer.byteLength(JSON.stringify(args)));
    expect(first.resultBytes).toBe(Buffer.byteLength(JSON.stringify({ content: [{ type: 'text', text: 'hello' }] })));
    expect(first.durationMs).toBeGreaterThan(0);
    expect(Date.parse(first.time)).toBeGreaterThan(Date.now() - 60_000);
    expect(rows[2]!.resultBytes).toBe(0);
    // Values stay out unless asked for.
    expect(rows.every((row) => row.arguments === undefined && row.agent === undefined)).toBe(true);
  });

  it("records the server's errors and timeouts with their codes", async () => {
    const d = await startDaemon({
      servers: { rich: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } }), slow: fixtureServerConfig('slow-tool') },
    });
    // The tool asks a REST caller (who cannot answer) to sample: it fails upstream.
    expect((await call(d, 'mcp_rich_ask_sampling', {})).body).toMatchObject({ isError: true });
    // Deadlines far shorter than the work: a tool error result with the code, and a rejected prompt get.
    const slowCall = await d.json('/tools/mcp_slow_slow/call', { method: 'POST', body: { arguments: { durationMs: 30_000 }, timeoutMs: 100 } });
    expect(slowCall.body).toMatchObject({ isError: true });
    const startedFile = join(await tempDir(), 'started');
    expect((await d.json('/prompts/mcp_slow_slow/get', { method: 'POST', body: { arguments: { startedFile }, timeoutMs: 100 } })).status).toBe(504);

    const rows = (await auditRows(d)).reverse();
    expect(rows.map(({ server, kind, outcome, code }) => ({ server, kind, outcome, code }))).toEqual([
      { server: 'rich', kind: 'tools/call', outcome: 'error', code: 'UPSTREAM_ERROR' },
      { server: 'slow', kind: 'tools/call', outcome: 'timeout', code: 'TOOL_CALL_TIMEOUT' },
      { server: 'slow', kind: 'prompts/get', outcome: 'timeout', code: 'UPSTREAM_TIMEOUT' },
    ]);
    // An error result is a result; a rejected request has none.
    expect(rows.map((row) => row.resultBytes > 0)).toEqual([true, true, false]);
  });

  it('keeps argument values with audit.arguments, the configured secret values masked', async () => {
    const d = await withArguments();
    await call(d, 'mcp_echo_echo', { text: `token=${SECRET} please` });
    const [row] = await auditRows(d);
    expect(row!.arguments).toBe(JSON.stringify({ text: 'token=**** please' }));
    expect(JSON.stringify(await auditRows(d))).not.toContain(SECRET);
  });

  it("names the agent a request's key belonged to", async () => {
    const d = await withArguments();
    // The auth guard hands the gateway an AgentRef; here the daemon's gateway gets it directly.
    await d.daemon.gateway.call('mcp_echo_echo', { text: 'hi' }, { transport: 'mcp', agent: { name: 'ci-bot' } });
    expect(await auditRows(d, '?agent=ci-bot')).toMatchObject([{ agent: 'ci-bot', name: 'mcp_echo_echo', outcome: 'ok' }]);
  });
});

describe('approval decisions', () => {
  it('are rows of their own, and a denied call is recorded as denied', async () => {
    const d = await startDaemon({
      servers: { echo: { ...fixtureServerConfig('echo-stdio', { env: { ECHO_API_KEY: SECRET } }), requireApproval: ['echo'] } },
      config: { audit: { arguments: true } },
    });
    const ws = await openEvents(d.url);
    for (const decision of ['approve', 'deny'] as const) {
      const calling = call(d, 'mcp_echo_echo', { text: `${decision} ${SECRET}` });
      const { id } = await nextEvent(ws, 'approval.requested');
      expect((await d.json(`/approvals/${id}/${decision}`, { method: 'POST' })).status).toBe(200);
      await calling;
    }
    const rows = (await auditRows(d)).reverse();
    expect(rows.map(({ transport, kind, name, outcome, code }) => ({ transport, kind, name, outcome, ...(code ? { code } : {}) }))).toEqual([
      { transport: 'operator', kind: 'approval', name: 'mcp_echo_echo', outcome: 'ok' },
      { transport: 'rest', kind: 'tools/call', name: 'mcp_echo_echo', outcome: 'ok' },
      { transport: 'operator', kind: 'approval', name: 'mcp_echo_echo', outcome: 'denied' },
      { transport: 'rest', kind: 'tools/call', name: 'mcp_echo_echo', outcome: 'denied', code: 'APPROVAL_DENIED' },
    ]);
    expect(rows[2]!.arguments).toBe(JSON.stringify({ text: 'deny ****' }));
  });
});

describe('GET /audit', () => {
  it('filters by agent, server, tool, outcome and since, newest first, up to limit', async () => {
    const d = await daemonWith();
    await call(d, 'mcp_echo_echo', { text: 'a' });
    await call(d, 'mcp_echo_reverse', { text: 'b' });
    await call(d, 'mcp_nope_x', {});
    await d.json(`/resources/read?uri=${encodeURIComponent('fixture://static/hello')}`);

    const names = (rows: Row[]) => rows.map((row) => row.name);
    expect(names(await auditRows(d))).toEqual(['fixture://static/hello', 'mcp_nope_x', 'mcp_echo_reverse', 'mcp_echo_echo']);
    expect(names(await auditRows(d, '?server=echo'))).toEqual(['mcp_echo_reverse', 'mcp_echo_echo']);
    expect(names(await auditRows(d, '?tool=mcp_echo_echo'))).toEqual(['mcp_echo_echo']);
    expect(names(await auditRows(d, '?outcome=not_found'))).toEqual(['mcp_nope_x']);
    expect(names(await auditRows(d, '?limit=2'))).toEqual(['fixture://static/hello', 'mcp_nope_x']);
    expect(await auditRows(d, '?agent=nobody')).toEqual([]);
    expect(await auditRows(d, `?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(names(await auditRows(d, `?since=${Date.now() - 60_000}&server=rich`))).toEqual(['fixture://static/hello']);

    for (const bad of ['?outcome=maybe', '?limit=0', '?limit=abc', '?since=yesterday', '?server=a&server=b']) {
      const res = await d.json<{ error: { code: string } }>(`/audit${bad}`);
      expect([bad, res.status, res.body.error.code]).toEqual([bad, 400, 'VALIDATION_FAILED']);
    }
  });
});

describe('call.finished', () => {
  it('is on the event feed with sizes and outcome, never argument values', async () => {
    const d = await withArguments();
    const ws = await openEvents(d.url);
    await call(d, 'mcp_echo_echo', { text: 'feed me' });
    const event = await nextEvent(ws, 'call.finished');
    expect(event).toMatchObject({
      transport: 'rest',
      server: 'echo',
      kind: 'tools/call',
      name: 'mcp_echo_echo',
      outcome: 'ok',
      argBytes: Buffer.byteLength(JSON.stringify({ text: 'feed me' })),
      resultBytes: expect.any(Number),
      durationMs: expect.any(Number),
    });
    expect(JSON.stringify(event)).not.toContain('feed me');
  });
});

describe('retention', () => {
  it('trims by audit.days and audit.maxRows when the daemon starts', async () => {
    const dbPath = join(await tempDir(), 'switchboard.db');
    const opened = openToolCache(dbPath);
    const now = Date.now();
    const entry = (ts: number, name: string): AuditEntry => ({
      ts,
      transport: 'rest',
      server: 'echo',
      kind: 'tools/call',
      name,
      outcome: 'ok',
      durationMs: 1,
      argBytes: 0,
      resultBytes: 0,
    });
    await opened.audit.append([
      entry(now - 40 * 86_400_000, 'ancient'),
      entry(now - 3000, 'a'),
      entry(now - 2000, 'b'),
      entry(now - 1000, 'c'),
      entry(now - 11 * 86_400_000, 'old'),
    ]);
    await opened.store.close();

    const d = await startDaemon({ config: { dbPath, audit: { days: 10, maxRows: 2 } } });
    expect((await auditRows(d)).map((row) => row.name)).toEqual(['c', 'b']);
  });
});

describe('audit.enabled: false', () => {
  it('records no calls and publishes no call.finished, and still answers GET /audit', async () => {
    const d = await daemonWith({ enabled: false });
    const events = await openEvents(d.url);
    onTestFinished(() => events.close());
    expect((await d.json('/tools/mcp_echo_echo/call', { method: 'POST', body: { arguments: { text: 'not audited' } } })).status).toBe(200);
    expect(await auditRows(d)).toEqual([]);
    // A status event after the call: had a call.finished been published, it would be before it.
    await d.json('/servers/echo/reload', { method: 'POST' });
    await nextEvent(events, 'server.status');
    expect(received(events).map((e) => e.type)).not.toContain('call.finished');
  });
});
