import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runStatus, runTools, type CommandIo } from '../../src/cli/client/index.js';
import type { ServerConfig } from '../../src/config/types.js';
import { nextDaemonEvent, recordDaemonEvents, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { mcpClient } from '../helpers/mcp-client.js';

/**
 * Issue #22 item 6, tool pinning: a served tool whose definition changes is held — off every
 * list, its calls refused with `TOOL_CHANGED` — until an operator approves it. Real daemon, the
 * `pinning` fixture (whose `mutate` changes `target`'s description and says `list_changed`), REST,
 * SDK clients of both eras, the CLI in-process.
 */

const CHANGED = 'Now also uploads ~/.ssh somewhere';

interface ToolList {
  tools: Array<{ name: string; description: string }>;
}

function pinDaemon(server: ServerConfig = fixtureServerConfig('pinning'), config: Parameters<typeof startDaemon>[0] = {}): Promise<TestDaemon> {
  return startDaemon({ servers: { pin: server }, ...config });
}

async function restNames(d: TestDaemon): Promise<string[]> {
  return (await d.json<ToolList>('/tools')).body.tools.map((t) => t.name);
}

/** Calls `mutate` and resolves with the `tools.held` it causes. */
async function mutate(d: TestDaemon, description = CHANGED) {
  const held = nextDaemonEvent(d.daemon, 'tools.held');
  const res = await d.json('/tools/mcp_pin_mutate/call', { method: 'POST', body: { arguments: { description } } });
  expect(res.status).toBe(200);
  return held;
}

async function run(command: (io: CommandIo) => Promise<number>, argv: string[]) {
  let stdout = '';
  let stderr = '';
  const write = (to: 'out' | 'err') => (chunk: string) => (to === 'out' ? (stdout += chunk) : (stderr += chunk));
  const code = await command({ argv, env: {}, stdout: { write: write('out') }, stderr: { write: write('err') } });
  return { code, stdout, stderr };
}

describe('tool pinning', () => {
  it('holds a changed tool: off REST and /mcp lists (both eras), calls refused, tools.held, the difference shown; approved → served', async () => {
    const d = await pinDaemon();
    // First connect: served without a hold.
    const before = await d.json<ToolList>('/tools');
    expect(before.body.tools.find((t) => t.name === 'mcp_pin_target')?.description).toBe('Target, as first served');
    const etag = before.headers.get('etag') as string;
    const legacy = await mcpClient(d.url, { era: 'legacy', name: 'pin-test' });
    const modern = await mcpClient(d.url, { era: { pin: '2026-07-28' }, name: 'pin-test' });

    expect(await mutate(d)).toEqual({
      type: 'tools.held',
      server: 'pin',
      tools: [{ name: 'target', exposedName: 'mcp_pin_target', changed: ['description'] }],
      heldCount: 1,
    });

    const after = await d.fetch('/tools', { headers: { 'if-none-match': etag } });
    expect(after.status).toBe(200);
    expect(((await after.json()) as ToolList).tools.map((t) => t.name)).not.toContain('mcp_pin_target');
    expect(await restNames(d)).toContain('mcp_pin_echo');
    for (const client of [legacy, modern]) {
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('mcp_pin_target');
      const error = await client.callTool({ name: 'mcp_pin_target', arguments: { text: 'x' } }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).code).toBe(ProtocolErrorCode.InvalidParams);
      expect((error as ProtocolError).data).toEqual({ code: 'TOOL_CHANGED' });
    }

    const call = await d.json<{ error: { code: string; message: string } }>('/tools/mcp_pin_target/call', { method: 'POST', body: { arguments: { text: 'x' } } });
    expect(call.status).toBe(409);
    expect(call.body.error.code).toBe('TOOL_CHANGED');
    expect(call.body.error.message).toContain('switchboard tools approve pin target');
    const streamed = await d.fetch('/tools/mcp_pin_target/call', { method: 'POST', headers: { accept: 'text/event-stream', 'content-type': 'application/json' }, body: '{}' });
    expect(streamed.status).toBe(409);
    expect((await d.json('/tools/mcp_pin_target')).status).toBe(409);

    const detail = await d.json<Record<string, unknown>>('/servers/pin');
    expect(detail.body).toMatchObject({ heldToolCount: 1, tools: expect.not.arrayContaining(['mcp_pin_target']) });
    const [held] = detail.body.heldTools as Array<Record<string, Record<string, unknown>>>;
    expect(held).toMatchObject({
      name: 'target',
      exposedName: 'mcp_pin_target',
      changed: ['description'],
      before: { description: 'Target, as first served' },
      after: { description: CHANGED },
    });
    expect(held!.before!.inputSchemaDigest).toBe(held!.after!.inputSchemaDigest);
    expect(held!.before!.hash).not.toBe(held!.after!.hash);

    // Nothing named, a name not held: refused with their codes.
    expect((await d.json('/servers/pin/tools/approve', { method: 'POST', body: {} })).status).toBe(400);
    expect((await d.json('/servers/pin/tools/approve', { method: 'POST', body: { tools: ['echo'] } })).body).toMatchObject({ error: { code: 'TOOL_NOT_FOUND' } });
    expect((await d.json('/servers/nope/tools/approve', { method: 'POST', body: { all: true } })).status).toBe(404);

    const served = nextDaemonEvent(d.daemon, 'tools.changed', (e) => e.cause === 'approve');
    const approved = await d.json<{ approved: string[]; server: Record<string, unknown> }>('/servers/pin/tools/approve', { method: 'POST', body: { tools: ['target'] } });
    expect(approved).toMatchObject({ status: 200, body: { approved: ['target'], server: { heldToolCount: 0, heldTools: [] } } });
    expect(await served).toMatchObject({ server: 'pin', added: ['mcp_pin_target'] });
    expect((await d.json<{ description: string }>('/tools/mcp_pin_target')).body.description).toBe(CHANGED);
    expect(await modern.callTool({ name: 'mcp_pin_target', arguments: { text: 'ok' } })).toMatchObject({ content: [{ text: 'target: ok' }] });
    expect((await legacy.listTools()).tools.map((t) => t.name)).toContain('mcp_pin_target');
  });

  it('serves a new tool without a hold; `status <server>` shows the change and `tools approve --all` serves it', async () => {
    const d = await pinDaemon();
    const events = recordDaemonEvents(d.daemon);
    const added = nextDaemonEvent(d.daemon, 'tools.changed', (e) => e.added.includes('mcp_pin_fresh'));
    expect((await d.json('/tools/mcp_pin_add_tool/call', { method: 'POST', body: { arguments: { name: 'fresh' } } })).status).toBe(200);
    await added;
    expect(await restNames(d)).toContain('mcp_pin_fresh');
    expect(events.filter((e) => e.type === 'tools.held')).toEqual([]);

    await mutate(d);
    expect((await run(runStatus, ['--url', d.url])).stdout).toMatch(/^pin\s+connected \(1 held: switchboard status pin\)\s/m);
    const status = await run(runStatus, ['pin', '--url', d.url]);
    expect(status).toMatchObject({ code: 0, stderr: '' });
    expect(status.stdout).toContain('target (mcp_pin_target): changed description');
    expect(status.stdout).toContain(`description: "Target, as first served" → "${CHANGED}"`);
    expect(status.stdout).toContain('approve: switchboard tools approve pin target');

    expect(await run(runTools, ['approve', 'pin', '--url', d.url])).toMatchObject({ code: 2 });
    const approve = await run(runTools, ['approve', 'pin', '--all', '--url', d.url]);
    expect(approve).toMatchObject({ code: 0, stderr: '' });
    expect(approve.stdout).toMatch(/^approved target$/m);
    expect(await restNames(d)).toContain('mcp_pin_target');
    expect((await run(runTools, ['approve', 'pin', '--all', '--url', d.url])).stdout).toBe('nothing held on pin\npin: connected, 7 tools\n');
  });

  it('serves a change at once with pinTools "off", per server and globally', async () => {
    for (const options of [{ server: { ...fixtureServerConfig('pinning'), pinTools: 'off' as const } }, { config: { pinTools: 'off' as const } }]) {
      const d = await pinDaemon(options.server, options.config ? { config: options.config } : {});
      const events = recordDaemonEvents(d.daemon);
      const relisted = nextDaemonEvent(d.daemon, 'tools.changed', (e) => e.cause === 'list_changed');
      expect((await d.json('/tools/mcp_pin_mutate/call', { method: 'POST', body: { arguments: { description: CHANGED } } })).status).toBe(200);
      await relisted;
      expect((await d.json<{ description: string }>('/tools/mcp_pin_target')).body.description).toBe(CHANGED);
      expect(events.filter((e) => e.type === 'tools.held')).toEqual([]);
      await d.close();
    }
  });

  it('holds a tool that changed across a daemon restart (pins persisted), from the cached list too', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-pins-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'description.txt');
    const dbPath = join(dir, 'switchboard.db');
    const server = fixtureServerConfig('pinning', { env: { DESCRIPTION_FILE: file } });
    await writeFile(file, 'First');

    const first = await pinDaemon(server, { config: { dbPath } });
    expect(await restNames(first)).toContain('mcp_pin_target');
    await first.close();

    await writeFile(file, 'Second');
    const second = await pinDaemon(server, { config: { dbPath }, until: 'idle' });
    const held = nextDaemonEvent(second.daemon, 'tools.held');
    await second.daemon.start();
    expect(await held).toMatchObject({ server: 'pin', tools: [{ name: 'target', changed: ['description'] }] });
    expect(await restNames(second)).not.toContain('mcp_pin_target');
    expect((await second.json('/servers/pin')).body).toMatchObject({ heldTools: [{ before: { description: 'First' }, after: { description: 'Second' } }] });
    await second.close();

    // The cache now holds the changed list; served before the server answers, it is held all the same.
    const third = await pinDaemon(server, { config: { dbPath, startupGateMs: 0 } });
    const cached = await third.json<{ tools: Array<{ name: string; deferred: boolean }> }>('/tools');
    expect(cached.body.tools.find((t) => t.name === 'mcp_pin_echo')).toMatchObject({ deferred: true });
    expect(cached.body.tools.map((t) => t.name)).not.toContain('mcp_pin_target');
    expect((await third.json('/tools/mcp_pin_target/call', { method: 'POST', body: {} })).status).toBe(409);
  });
});

describe('tool pinning and approvals together', () => {
  it('a call approved after its tool was held meanwhile is refused with TOOL_CHANGED, not run', async () => {
    const d = await pinDaemon({ ...fixtureServerConfig('pinning'), requireApproval: ['target'] } as ServerConfig);
    const requested = nextDaemonEvent(d.daemon, 'approval.requested');
    const call = d.json<{ error?: { code: string } }>('/tools/mcp_pin_target/call', { method: 'POST', body: { arguments: { text: 'x' } } });
    const { id } = (await requested) as { id: string };
    await mutate(d);
    expect((await d.json(`/approvals/${id}/approve`, { method: 'POST' })).status).toBe(200);
    expect(await call).toMatchObject({ status: 409, body: { error: { code: 'TOOL_CHANGED' } } });
  });
});

describe('approving what was reviewed', () => {
  it('refuses to approve a held tool whose definition changed again since it was shown, and approves the one shown', async () => {
    const d = await pinDaemon();
    await mutate(d, 'first change');
    const shown = (await d.json<{ heldTools: Array<{ name: string; after: { hash: string } }> }>('/servers/pin')).body.heldTools;
    const reviewed = shown.find((t) => t.name === 'target')!.after.hash;
    await mutate(d, 'second change, never shown');
    const refused = await d.json('/servers/pin/tools/approve', { method: 'POST', body: { tools: ['target'], hashes: { target: reviewed } } });
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'TOOL_CHANGED' } } });
    expect(await restNames(d)).not.toContain('mcp_pin_target');

    const now = (await d.json<{ heldTools: Array<{ name: string; after: { hash: string } }> }>('/servers/pin')).body.heldTools;
    const hash = now.find((t) => t.name === 'target')!.after.hash;
    expect((await d.json('/servers/pin/tools/approve', { method: 'POST', body: { all: true, hashes: { target: hash } } })).status).toBe(200);
    expect(await restNames(d)).toContain('mcp_pin_target');
  });
});
