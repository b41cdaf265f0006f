import { Client, StreamableHTTPClientTransport, type Progress } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../../src/cli/dispatch.js';
import { ServerConfigSchema } from '../../src/config/server-schema.js';
import { deferred } from '../../src/util/deferred.js';
import { textOf } from '../helpers/connect.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { nextEvent, openEvents } from '../helpers/events.js';
import { startFixtureHttp } from '../helpers/fixtures.js';
import { sharedByTests } from '../helpers/shared.js';
import { sseReader } from '../helpers/sse.js';

/**
 * Issue #22 item 7: calls to `requireApproval` tools wait for an operator — approved, denied,
 * timed out, withdrawn — over REST (plain and streamed) and `/mcp` in both eras, with the
 * operator's side on REST, the event feed and the CLI. A real daemon, a real echo server.
 */

interface ErrorBody {
  error: { code: string; message: string };
}
interface Pending {
  id: string;
  server: string;
  tool: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** Approvals are what these tests are about, not stdio: each daemon's `echo` is a session on one echo-http fixture for the file. */
const echoHttp = sharedByTests(
  () => startFixtureHttp('echo-http'),
  (http) => http.close(),
);

/** `echo` (the server's own name) needs approval; `add` and `reverse` do not. */
async function daemonWithApproval(config: { approvalTimeoutMs?: number; shutdownGraceMs?: number } = {}, serverTimeoutMs?: number): Promise<TestDaemon> {
  const { url } = await echoHttp();
  // Argument audit on: approvals show their arguments only then (issue #40 item 3).
  return startDaemon({
    servers: {
      echo: {
        type: 'http',
        url,
        requireApproval: ['ech?'],
        ...(serverTimeoutMs !== undefined ? { approvalTimeoutMs: serverTimeoutMs } : {}),
      },
    },
    config: { audit: { arguments: true }, ...config },
  });
}

function callEcho(sb: TestDaemon, text: string, init: RequestInit = {}): Promise<Response> {
  return sb.fetch('/tools/mcp_echo_echo/call', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { text } }),
    ...init,
  });
}

async function pending(sb: TestDaemon): Promise<Pending[]> {
  return (await sb.json<{ approvals: Pending[] }>('/approvals')).body.approvals;
}

async function mcpAgent(sb: TestDaemon, mode: 'legacy' | { pin: string }): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', sb.url)));
  onTestFinished(() => client.close());
  return client;
}

function capture() {
  let text = '';
  return { output: { write: (chunk: string) => void (text += chunk) }, text: () => text };
}

async function cli(sb: TestDaemon, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = capture();
  const err = capture();
  const code = await runCli({ argv: [...argv, '--url', sb.url], env: {}, home: '/nonexistent', cwd: '/', stdout: out.output, stderr: err.output });
  return { code, stdout: out.text(), stderr: err.text() };
}

describe('requireApproval', () => {
  it('holds a matching REST call until approved, shows it with its arguments, and lets other tools through', async () => {
    const sb = await daemonWithApproval();
    const ws = await openEvents(sb.url);
    onTestFinished(() => ws.close());

    const call = callEcho(sb, 'rm -rf /tmp/x');
    const requested = await nextEvent(ws, 'approval.requested');
    expect(requested).toMatchObject({ server: 'echo', tool: 'echo', name: 'mcp_echo_echo', arguments: { text: 'rm -rf /tmp/x' } });
    expect(Date.parse(requested.expiresAt)).toBeGreaterThan(Date.now() + 60_000);
    expect(await pending(sb)).toEqual([expect.objectContaining({ id: requested.id, arguments: { text: 'rm -rf /tmp/x' } })]);

    // A tool outside the globs is not held, while the other call still waits.
    const add = await sb.json('/tools/mcp_echo_add/call', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { a: 1, b: 2 } }) });
    expect(add.status).toBe(200);
    expect((await pending(sb)).map((p) => p.id)).toEqual([requested.id]);

    const approved = await sb.json<{ approval: { outcome: string } }>(`/approvals/${requested.id}/approve`, { method: 'POST' });
    expect(approved).toMatchObject({ status: 200, body: { approval: { id: requested.id, outcome: 'approved' } } });
    const res = await call;
    expect(res.status).toBe(200);
    expect(textOf((await res.json()) as { content: unknown })).toBe('rm -rf /tmp/x');
    expect(await nextEvent(ws, 'approval.resolved')).toMatchObject({ id: requested.id, outcome: 'approved' });
    expect(await pending(sb)).toEqual([]);

    const again = await sb.json<ErrorBody>(`/approvals/${requested.id}/deny`, { method: 'POST' });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('APPROVAL_NOT_FOUND');
  });

  it('answers a denied REST call with 403 APPROVAL_DENIED', async () => {
    const sb = await daemonWithApproval();
    const ws = await openEvents(sb.url);
    onTestFinished(() => ws.close());
    const call = callEcho(sb, 'no');
    const { id } = await nextEvent(ws, 'approval.requested');
    expect((await sb.json(`/approvals/${id}/deny`, { method: 'POST' })).status).toBe(200);
    const res = await call;
    expect(res.status).toBe(403);
    expect(((await res.json()) as ErrorBody).error.code).toBe('APPROVAL_DENIED');
    expect(await nextEvent(ws, 'approval.resolved')).toMatchObject({ id, outcome: 'denied' });
  });

  it("times out with 504 APPROVAL_TIMEOUT after approvalTimeoutMs (global, and the server's own winning)", async () => {
    for (const sb of [await daemonWithApproval({ approvalTimeoutMs: 150 }), await daemonWithApproval({ approvalTimeoutMs: 600_000 }, 150)]) {
      const ws = await openEvents(sb.url);
      onTestFinished(() => ws.close());
      const res = await callEcho(sb, 'late');
      expect(res.status).toBe(504);
      expect(((await res.json()) as ErrorBody).error.code).toBe('APPROVAL_TIMEOUT');
      expect(await nextEvent(ws, 'approval.resolved')).toMatchObject({ outcome: 'timeout' });
    }
  });

  it('tells a streamed REST call "waiting for approval" as progress, and withdraws the approval when its client goes away', async () => {
    const sb = await daemonWithApproval();
    const ws = await openEvents(sb.url);
    onTestFinished(() => ws.close());
    const res = await callEcho(sb, 'streamed', { headers: { 'content-type': 'application/json', accept: 'text/event-stream' } });
    const stream = sseReader(res);
    expect(await stream.next()).toEqual({ event: 'progress', data: { progress: 0, message: 'waiting for approval' } });
    const { id } = await nextEvent(ws, 'approval.requested');
    await sb.json(`/approvals/${id}/approve`, { method: 'POST' });
    expect(await stream.rest()).toEqual([{ event: 'result', data: { content: [{ type: 'text', text: 'streamed' }] } }]);

    const gone = new AbortController();
    const abandoned = callEcho(sb, 'abandoned', { signal: gone.signal }).catch(() => undefined);
    await nextEvent(ws, 'approval.requested');
    gone.abort();
    await abandoned;
    expect(await nextEvent(ws, 'approval.resolved')).toMatchObject({ outcome: 'withdrawn' });
    expect(await pending(sb)).toEqual([]);
  });

  it('ends a held call with 503 SHUTTING_DOWN as soon as the daemon stops (nobody could approve it any more)', async () => {
    // A grace far longer than the test: only ending held calls at once lets the answer come.
    const sb = await daemonWithApproval({ shutdownGraceMs: 600_000 });
    const ws = await openEvents(sb.url);
    onTestFinished(() => ws.close());
    const call = callEcho(sb, 'stopping');
    await nextEvent(ws, 'approval.requested');
    const closing = sb.close();
    const res = await call;
    expect(res.status).toBe(503);
    expect(((await res.json()) as ErrorBody).error.code).toBe('SHUTTING_DOWN');
    await closing;
  });

  it.each([
    ['2025-11-25', 'legacy' as const],
    ['2026-07-28', { pin: '2026-07-28' }],
  ])('holds a %s /mcp call: progress "waiting for approval", approved → the result, denied → APPROVAL_DENIED as an error result', async (_era, mode) => {
    const sb = await daemonWithApproval();
    const client = await mcpAgent(sb, mode);
    const ws = await openEvents(sb.url);
    onTestFinished(() => ws.close());

    const waiting = deferred<Progress>();
    const approvedCall = client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'via mcp' } }, { onprogress: (progress) => waiting.resolve(progress) });
    expect(await waiting.promise).toMatchObject({ progress: 0, message: 'waiting for approval' });
    const first = await nextEvent(ws, 'approval.requested');
    expect(first.arguments).toEqual({ text: 'via mcp' });
    await sb.json(`/approvals/${first.id}/approve`, { method: 'POST' });
    expect(textOf(await approvedCall)).toBe('via mcp');

    const deniedCall = client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'refused' } });
    const second = await nextEvent(ws, 'approval.requested');
    await sb.json(`/approvals/${second.id}/deny`, { method: 'POST' });
    const denied = await deniedCall;
    expect(denied).toMatchObject({ isError: true, _meta: { 'switchboard/error': { code: 'APPROVAL_DENIED' } } });
  });

  it('lists, approves and denies from the CLI', async () => {
    const sb = await daemonWithApproval();
    const ws = await openEvents(sb.url);
    onTestFinished(() => ws.close());
    expect(await cli(sb, 'approvals')).toMatchObject({ code: 0, stdout: 'No calls are waiting for approval.\n' });

    const yes = callEcho(sb, 'from the cli');
    const { id: yesId } = await nextEvent(ws, 'approval.requested');
    const no = callEcho(sb, 'not this one');
    const { id: noId } = await nextEvent(ws, 'approval.requested');

    const listed = await cli(sb, 'approvals');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(yesId);
    expect(listed.stdout).toContain(noId);
    expect(listed.stdout).toContain('{"text":"from the cli"}');
    expect(listed.stdout).toContain('2 calls waiting');
    // A lone daemon's approvals name no replica: no REPLICA column.
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID +TOOL +SERVER +AGENT +EXPIRES/);

    expect(await cli(sb, 'approve', yesId)).toMatchObject({ code: 0, stdout: `approved mcp_echo_echo (${yesId})\n` });
    expect(await cli(sb, 'deny', noId)).toMatchObject({ code: 0, stdout: `denied mcp_echo_echo (${noId})\n` });
    expect((await yes).status).toBe(200);
    expect((await no).status).toBe(403);
    expect(await cli(sb, 'approve', noId)).toMatchObject({ code: 1, stderr: expect.stringContaining('APPROVAL_NOT_FOUND') });
    expect(await cli(sb, 'approve')).toMatchObject({ code: 2 });
  });

  it('approves "the same call" for a while from the CLI (--for 1h), and refuses a bad duration', async () => {
    const sb = await daemonWithApproval();
    const ws = await openEvents(sb.url);
    onTestFinished(() => ws.close());
    const call = callEcho(sb, 'again and again');
    const { id } = await nextEvent(ws, 'approval.requested');
    expect(await cli(sb, 'approve', id, '--for', 'soon')).toMatchObject({ code: 2, stderr: expect.stringContaining('invalid --for "soon"') });
    const approved = await cli(sb, 'approve', id, '--for', '1h');
    expect(approved).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^approved mcp_echo_echo \\(${id}\\); the same call until \\S+Z\\n$`)) });
    expect((await call).status).toBe(200);
    // The same call again passes without anyone asked.
    expect((await callEcho(sb, 'again and again')).status).toBe(200);
    expect(await pending(sb)).toEqual([]);
  });

  it('rejects a malformed glob in the config with a message naming it', () => {
    const parsed = ServerConfigSchema.safeParse({ command: 'x', requireApproval: ['delete_[a-'] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/^invalid glob "delete_\[a-": Missing closing: "\]"/);
    expect(ServerConfigSchema.safeParse({ command: 'x', requireApproval: ['delete_*', '{rm,mv}'] }).success).toBe(true);
  });
});
