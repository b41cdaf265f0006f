import type { Client, ElicitRequest, Progress } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { deferred } from '../../src/util/deferred.js';
import { addAgentKey, agentClient, OPERATOR_TOKEN } from '../helpers/agents.js';
import { textOf } from '../helpers/connect.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { nextEvent, openEvents } from '../helpers/events.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { ManualClock } from '../helpers/manual-clock.js';

/**
 * Issue #40 item 3: an approval is bound to the exact call — agent, tool, arguments digest —
 * and expires; "the same call for 1 h" lets identical calls through until it expires; a
 * 2026-07-28 client is answered `input_required` (a link to the dashboard's approval page, or a
 * yes/no form) and its retry runs the call once approved, while a 2025 client is held as before.
 * Arguments show only with argument audit on. A real daemon, a real echo server, real SDK clients.
 */

interface Pending {
  id: string;
  agent?: string;
  arguments?: Record<string, unknown>;
  argumentsDigest: string;
  mode: string;
}

type Options = { clock?: ManualClock; config?: Record<string, unknown> };

/** `echo` (the server's own name) needs approval; the operator token is set, so agents use keys. */
async function daemonWithApproval({ clock, config = {} }: Options = {}): Promise<TestDaemon> {
  return startDaemon({
    servers: { echo: { ...fixtureServerConfig('echo-stdio'), requireApproval: ['echo'] } },
    config: { token: OPERATOR_TOKEN, ...config },
    ...(clock ? { deps: { clock } } : {}),
  });
}

/** `mcp_echo_echo` over REST as `key`'s agent (the operator without one). */
function callEcho(d: TestDaemon, text: string, key?: string): Promise<Response> {
  return d.fetch('/tools/mcp_echo_echo/call', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ arguments: { text } }),
  });
}

async function pending(d: TestDaemon): Promise<Pending[]> {
  return (await d.json<{ approvals: Pending[] }>('/approvals')).body.approvals;
}

async function decide(d: TestDaemon, id: string, verb: 'approve' | 'deny', body?: Record<string, unknown>) {
  const res = await d.json<{ approval: { outcome: string; until?: string } }>(`/approvals/${id}/${verb}`, { method: 'POST', ...(body ? { body } : {}) });
  expect(res.status).toBe(200);
  return res.body.approval;
}

async function events(d: TestDaemon) {
  const ws = await openEvents(d.url, { token: OPERATOR_TOKEN });
  onTestFinished(() => ws.close());
  return ws;
}

/** A 2026-07-28 client that takes elicitations of `mode`, answering each with `answer` (after it ran). */
async function modernClient(d: TestDaemon, key: string, mode: 'url' | 'form', answer: (request: ElicitRequest['params']) => Promise<Record<string, unknown>>): Promise<Client> {
  const client = await agentClient(d, key, { pin: '2026-07-28' }, { elicitation: { [mode]: {} } });
  client.setRequestHandler('elicitation/create', (request) => answer(request.params) as never);
  return client;
}

describe('approvals bound to the exact call', () => {
  it('approving call A runs A only: a call B with other arguments, and A again, are held again; arguments hidden without argument audit', async () => {
    const d = await daemonWithApproval();
    const ws = await events(d);

    const a = callEcho(d, 'rm -rf /srv/a');
    const requestedA = await nextEvent(ws, 'approval.requested');
    const b = callEcho(d, 'rm -rf /srv/b');
    const requestedB = await nextEvent(ws, 'approval.requested');
    expect(requestedA).toMatchObject({ name: 'mcp_echo_echo', mode: 'held', argumentsDigest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(requestedB.argumentsDigest).not.toBe(requestedA.argumentsDigest);
    // audit.arguments is off: neither the event nor the list shows the values.
    expect(requestedA).not.toHaveProperty('arguments');
    expect((await pending(d)).map((p) => [p.id, p.arguments])).toEqual([
      [requestedA.id, undefined],
      [requestedB.id, undefined],
    ]);

    await decide(d, requestedA.id, 'approve');
    expect(textOf((await (await a).json()) as { content: unknown })).toBe('rm -rf /srv/a');
    expect((await pending(d)).map((p) => p.id)).toEqual([requestedB.id]);

    // The approval was for that call: the same call again waits for a decision of its own.
    const again = callEcho(d, 'rm -rf /srv/a');
    const requestedAgain = await nextEvent(ws, 'approval.requested');
    expect(requestedAgain).toMatchObject({ argumentsDigest: requestedA.argumentsDigest });
    expect(requestedAgain.id).not.toBe(requestedA.id);
    await decide(d, requestedB.id, 'deny');
    await decide(d, requestedAgain.id, 'deny');
    expect((await b).status).toBe(403);
    expect((await again).status).toBe(403);
  });

  it('"the same call for 1 h" lets identical calls of that agent through until it expires, on the injected clock', async () => {
    const clock = new ManualClock();
    const d = await daemonWithApproval({ clock });
    const alice = await addAgentKey(d, { name: 'alice' });
    const bob = await addAgentKey(d, { name: 'bob' });
    const ws = await events(d);
    const HOUR = 3_600_000;

    const first = callEcho(d, 'deploy v2', alice);
    const requested = await nextEvent(ws, 'approval.requested');
    expect(requested).toMatchObject({ agent: 'alice' });
    const approval = await decide(d, requested.id, 'approve', { forMs: HOUR });
    expect(approval).toMatchObject({ outcome: 'approved', until: new Date(clock.now() + HOUR).toISOString() });
    expect(await nextEvent(ws, 'approval.resolved')).toMatchObject({ id: requested.id, until: approval.until });
    expect((await first).status).toBe(200);

    // Within the hour the same call passes at once, twice: nobody is asked.
    clock.advance(HOUR - 1);
    for (let i = 0; i < 2; i++) {
      const res = await callEcho(d, 'deploy v2', alice);
      expect(res.status).toBe(200);
    }
    expect(await pending(d)).toEqual([]);

    // Other arguments, or another agent, are other calls.
    const other = callEcho(d, 'deploy v3', alice);
    const otherHeld = await nextEvent(ws, 'approval.requested');
    const byBob = callEcho(d, 'deploy v2', bob);
    const bobHeld = await nextEvent(ws, 'approval.requested');
    expect(bobHeld).toMatchObject({ agent: 'bob', argumentsDigest: requested.argumentsDigest });
    await decide(d, otherHeld.id, 'deny');
    await decide(d, bobHeld.id, 'deny');
    expect([(await other).status, (await byBob).status]).toEqual([403, 403]);

    // Once the hour is over, the call waits again.
    clock.advance(1);
    const late = callEcho(d, 'deploy v2', alice);
    const lateHeld = await nextEvent(ws, 'approval.requested');
    expect(lateHeld).toMatchObject({ agent: 'alice', argumentsDigest: requested.argumentsDigest });
    await decide(d, lateHeld.id, 'deny');
    expect((await late).status).toBe(403);
  });

  it('refuses a "for" longer than a week with 400 VALIDATION_FAILED', async () => {
    const d = await daemonWithApproval();
    const ws = await events(d);
    const call = callEcho(d, 'x');
    const { id } = await nextEvent(ws, 'approval.requested');
    const res = await d.json<{ error: { code: string } }>(`/approvals/${id}/approve`, { method: 'POST', body: { forMs: 8 * 24 * 3_600_000 } });
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_FAILED' } } });
    await decide(d, id, 'deny');
    expect((await call).status).toBe(403);
  });

  it('answers a 2026-07-28 client input_required with a link to the approval page; its retry completes once approved', async () => {
    const d = await daemonWithApproval({ config: { audit: { arguments: true } } });
    const key = await addAgentKey(d, { name: 'alice' });
    const ws = await events(d);
    const asked: Array<ElicitRequest['params']> = [];
    const client = await modernClient(d, key, 'url', async (params) => {
      asked.push(params);
      // The client is asked while nothing is decided: its request has ended (a held one would not answer).
      const [waiting] = await pending(d);
      expect(waiting).toMatchObject({ agent: 'alice', mode: 'input_required', arguments: { text: 'via 2026' } });
      await decide(d, waiting!.id, 'approve');
      return { action: 'accept' };
    });

    const result = await client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'via 2026' } });
    expect(textOf(result)).toBe('via 2026');
    const requested = await nextEvent(ws, 'approval.requested');
    expect(asked).toEqual([expect.objectContaining({ mode: 'url', message: expect.stringContaining('mcp_echo_echo'), url: `${d.url}/ui#/approvals/${requested.id}` })]);
    expect(requested).toMatchObject({ mode: 'input_required', arguments: { text: 'via 2026' } });
    expect(await nextEvent(ws, 'approval.resolved')).toMatchObject({ id: requested.id, outcome: 'approved' });
    expect(await pending(d)).toEqual([]);
  });

  it('a 2026-07-28 retry of a denied call gets APPROVAL_DENIED as an error result, and the link names approvalUrl', async () => {
    const d = await daemonWithApproval({ config: { approvalUrl: 'https://switchboard.example.com/ops/' } });
    const key = await addAgentKey(d, { name: 'alice' });
    let url: unknown;
    const client = await modernClient(d, key, 'url', async (params) => {
      url = (params as { url?: string }).url;
      const [waiting] = await pending(d);
      await decide(d, waiting!.id, 'deny');
      return { action: 'accept' };
    });
    const result = await client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'no' } });
    expect(result).toMatchObject({ isError: true, _meta: { 'switchboard/error': { code: 'APPROVAL_DENIED' } } });
    expect(url).toMatch(/^https:\/\/switchboard\.example\.com\/ops\/ui#\/approvals\/[\w-]+$/);
  });

  it('asks a 2026-07-28 client yes or no where approvalPrompt is "form": yes runs the call, no denies it', async () => {
    const d = await daemonWithApproval({ config: { approvalPrompt: 'form' } });
    const key = await addAgentKey(d, { name: 'alice' });
    const ws = await events(d);
    let approve = true;
    const client = await modernClient(d, key, 'form', async (params) => {
      expect(params).toMatchObject({ mode: 'form', requestedSchema: { properties: { approve: { type: 'boolean' } }, required: ['approve'] } });
      return { action: 'accept', content: { approve } };
    });
    expect(textOf(await client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'yes' } }))).toBe('yes');
    expect(await nextEvent(ws, 'approval.resolved')).toMatchObject({ agent: 'alice', outcome: 'approved' });

    approve = false;
    const refused = await client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'no' } });
    expect(refused).toMatchObject({ isError: true, _meta: { 'switchboard/error': { code: 'APPROVAL_DENIED' } } });
    expect(await nextEvent(ws, 'approval.resolved')).toMatchObject({ outcome: 'denied' });
  });

  it('holds a 2025-era client that takes elicitations as before: its request waits, and completes once approved', async () => {
    const d = await daemonWithApproval();
    const key = await addAgentKey(d, { name: 'alice' });
    const ws = await events(d);
    const client = await agentClient(d, key, 'legacy', { elicitation: { url: {}, form: {} } });
    client.setRequestHandler('elicitation/create', () => {
      throw new Error('a 2025-era client is not asked');
    });
    const waiting = deferred<Progress>();
    const call = client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'via 2025' } }, { onprogress: (progress) => waiting.resolve(progress) });
    expect(await waiting.promise).toMatchObject({ message: 'waiting for approval' });
    const requested = await nextEvent(ws, 'approval.requested');
    expect(requested).toMatchObject({ agent: 'alice', mode: 'held' });
    await decide(d, requested.id, 'approve');
    expect(textOf(await call)).toBe('via 2025');
  });
});
