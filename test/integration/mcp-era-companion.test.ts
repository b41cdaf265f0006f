import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import { textOf } from '../helpers/connect.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import type { Cleanup } from '../helpers/process.js';
import { sharedWithCleanup } from '../helpers/shared.js';

/**
 * Issue #21, across eras: a dual-era HTTP server answered in 2026-07-28 can ask only its 2025
 * clients (sampling, elicitation). The era companion — a 2025-era connection beside the live one
 * — carries a 2025-era agent's calls there, so the agent is asked; everything else stays as it was.
 */

type Mode = 'legacy' | { pin: string };

interface Stats {
  initialize: number;
  terminated: number;
  modernPosts: number;
}

async function dualServer(era: 'dual' | 'modern' = 'dual', cleanup: Cleanup = onTestFinished): Promise<{ config: ServerConfig; stats: () => Promise<Stats> }> {
  const http = await startFixtureHttp('dual-asks-http', { env: { ERA: era } });
  cleanup(() => http.close());
  const stats = async () => (await (await fetch(new URL('/stats', http.url))).json()) as Stats;
  return { config: { type: 'http', url: http.url }, stats };
}

async function agent(daemon: TestDaemon, mode: Mode): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode }, capabilities: { sampling: {}, elicitation: { form: {} } } });
  client.setRequestHandler('sampling/createMessage', () => ({ role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'test-model' }));
  client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { answer: 'Ada' } }));
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', daemon.url)));
  onTestFinished(() => client.close());
  return client;
}

async function companionOf(daemon: TestDaemon, server: string): Promise<string> {
  const { body } = await daemon.json<{ companion: string; protocol: { era: string } | null }>(`/servers/${server}`);
  return body.companion;
}

/**
 * A dual-era server no companion is ever opened to, shared by the two tests that prove none is
 * (a 2026-07-28 agent; `eraCompanion: false`): each asserts it saw no initialize at all, which
 * holds in any order; one fixture process fewer.
 */
const neverAsked = sharedWithCleanup((cleanup) => dualServer('dual', cleanup));

const ASKED = 'sampled: hello; elicited: accept Ada';
const NOBODY = 'nobody asked (2026-07-28)';

describe('the era companion of a dual-era HTTP server spoken to in 2026-07-28', () => {
  it('lets a 2025-era agent be asked mid-call (tools and prompts), with the log message between; opened once, shared', async () => {
    const { config, stats } = await dualServer();
    const daemon = await startDaemon({ servers: { dual: config }, captureLogs: 'info' });
    const { body } = await daemon.json<{ protocol: { version: string } }>('/servers/dual');
    expect(body.protocol.version).toBe('2026-07-28');
    expect(await companionOf(daemon, 'dual')).toBe('idle');

    const client = await agent(daemon, 'legacy');
    const logged: unknown[] = [];
    client.setNotificationHandler('notifications/message', (n) => void logged.push(n.params.data));
    expect(textOf(await client.callTool({ name: 'mcp_dual_ask', arguments: {} }))).toBe(ASKED);
    expect(logged).toContain('between questions');
    expect(await companionOf(daemon, 'dual')).toBe('open');
    expect(daemon.logs.entries().some((e) => e.msg === 'era companion open' && e.server === 'dual')).toBe(true);

    const prompt = await client.getPrompt({ name: 'mcp_dual_ask' });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'sampled: hello' });
    // A second 2025 agent shares the companion; a tool only the 2026-07-28 path has stays there.
    const other = await agent(daemon, 'legacy');
    expect(textOf(await other.callTool({ name: 'mcp_dual_ask', arguments: {} }))).toBe(ASKED);
    expect(textOf(await other.callTool({ name: 'mcp_dual_modern_only', arguments: {} }))).toBe('2026-07-28');
    expect((await stats()).initialize).toBe(1);
  });

  it('leaves a 2026-07-28 agent on the live connection, opening nothing', async () => {
    const { config, stats } = await neverAsked();
    const daemon = await startDaemon({ servers: { dual: config } });
    const client = await agent(daemon, { pin: '2026-07-28' });
    expect(textOf(await client.callTool({ name: 'mcp_dual_ask', arguments: {} }))).toBe(NOBODY);
    expect(textOf(await client.callTool({ name: 'mcp_dual_era', arguments: {} }))).toBe('2026-07-28');
    expect((await stats()).initialize).toBe(0);
    expect(await companionOf(daemon, 'dual')).toBe('idle');
  });

  it('ends its session when the server is disconnected, and when it is reloaded', async () => {
    const { config, stats } = await dualServer();
    const daemon = await startDaemon({ servers: { dual: config } });
    const client = await agent(daemon, 'legacy');
    expect(textOf(await client.callTool({ name: 'mcp_dual_era', arguments: {} }))).toBe('2025');
    expect((await daemon.json('/servers/dual/disconnect', { method: 'POST' })).status).toBe(200);
    expect(await stats()).toMatchObject({ initialize: 1, terminated: 1 });

    expect((await daemon.json('/servers/dual/reload', { method: 'POST' })).status).toBe(200);
    expect(textOf(await client.callTool({ name: 'mcp_dual_era', arguments: {} }))).toBe('2025');
    expect(await stats()).toMatchObject({ initialize: 2, terminated: 1 });
    expect((await daemon.json('/servers/dual/reload', { method: 'POST' })).status).toBe(200);
    expect(await stats()).toMatchObject({ initialize: 2, terminated: 2 });
    expect(await companionOf(daemon, 'dual')).toBe('idle');
  });

  it('is tried once against a modern-only server, then calls go on through the live connection', async () => {
    const { config, stats } = await dualServer('modern');
    const daemon = await startDaemon({ servers: { dual: config }, captureLogs: 'info' });
    const client = await agent(daemon, 'legacy');
    expect(textOf(await client.callTool({ name: 'mcp_dual_ask', arguments: {} }))).toBe(NOBODY);
    expect(await companionOf(daemon, 'dual')).toBe('unavailable');
    expect(textOf(await client.callTool({ name: 'mcp_dual_ask', arguments: {} }))).toBe(NOBODY);
    expect((await stats()).initialize).toBe(1);
    expect(daemon.logs.entries().filter((e) => e.msg === 'era companion unavailable; 2025-era agents use the live connection')).toHaveLength(1);
  });

  it('is off with eraCompanion: false', async () => {
    const { config, stats } = await neverAsked();
    const daemon = await startDaemon({ servers: { dual: { ...config, eraCompanion: false } } });
    const client = await agent(daemon, 'legacy');
    expect(textOf(await client.callTool({ name: 'mcp_dual_ask', arguments: {} }))).toBe(NOBODY);
    expect(await companionOf(daemon, 'dual')).toBe('off');
    expect((await stats()).initialize).toBe(0);
  });

  it('is never opened for a stdio server (no sibling process)', async () => {
    const daemon = await startDaemon({ servers: { rich: fixtureServerConfig('rich-stdio', { env: { ERA: 'dual' } }) }, captureLogs: 'info' });
    const client = await agent(daemon, 'legacy');
    const { body } = await daemon.json<{ protocol: { era: string } }>('/servers/rich');
    expect(body.protocol.era).toBe('modern');
    // The 2026-07-28 stdio server's input_required is answered by the agent as today.
    expect(textOf(await client.callTool({ name: 'mcp_rich_ask_sampling', arguments: {} }))).toBe('sampled: hello');
    expect(await companionOf(daemon, 'rich')).toBe('none');
    expect(daemon.logs.text()).not.toContain('era companion');
  });
});
