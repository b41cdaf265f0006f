import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deferred } from '../../src/util/deferred.js';
import { discoveryOf, startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { sharedByTests } from '../helpers/shared.js';
import { tempDir, waitForFile } from '../helpers/process.js';

/** The REST mirrors of prompts and resources (`/prompts`, `/resources`) against real fixture servers. */

interface ErrorBody {
  error: { code: string; message: string };
}
interface PromptList {
  version: number;
  prompts: Array<{ name: string; server: string; originalName: string; title?: string; description?: string; arguments?: unknown }>;
}
interface ResourceList {
  version: number;
  resources: Array<{ uri: string; name: string; server: string; mimeType?: string }>;
  resourceTemplates: Array<{ uriTemplate: string; name: string; server: string }>;
}
interface ReadResult {
  contents: Array<{ uri: string; mimeType?: string; text?: string; blob?: string }>;
}

/**
 * Two rich servers of different eras and URI schemes: `rich` over stdio (2025 only), `remote` over
 * HTTP (2026-07-28). One daemon for the tests of this file, which only list, get and read.
 */
const richDaemon = sharedByTests(
  async () => {
    const remote = await startFixtureHttp('rich-http', { env: { ERA: 'modern', URI_SCHEME: 'remote' } });
    try {
      const daemon = await startDaemon({
        servers: {
          rich: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } }),
          remote: { type: 'http', url: remote.url },
        },
        lifetime: 'manual',
      });
      return { daemon, remote };
    } catch (err) {
      await remote.close();
      throw err;
    }
  },
  async ({ daemon, remote }) => {
    await daemon.close();
    await remote.close();
  },
);

/** A `prompts/get` of the slow-tool fixture, running upstream (its started file written) when this resolves. */
async function slowPromptGet() {
  const dir = await tempDir();
  const started = join(dir, 'started');
  const marker = join(dir, 'cancelled');
  const sb = await startDaemon({ servers: { slow: fixtureServerConfig('slow-tool', { env: { CANCEL_MARKER: marker } }) } });
  const client = new AbortController();
  const request = sb.fetch('/prompts/mcp_slow_slow/get', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { startedFile: started } }),
    signal: client.signal,
  });
  await waitForFile(started);
  return { sb, client, request, marker };
}

describe('GET /prompts', () => {
  it('lists every server’s prompts under exposed names, with their fields, filtered by server', async () => {
    const { daemon: sb } = await richDaemon();
    const all = await sb.json<PromptList>('/prompts');
    expect(all.status).toBe(200);
    expect(all.body.version).toBeGreaterThan(0);
    expect(all.body.prompts.map((p) => p.name).sort()).toEqual(['mcp_remote_greet', 'mcp_remote_plain', 'mcp_rich_greet', 'mcp_rich_plain']);
    expect(all.body.prompts.find((p) => p.name === 'mcp_rich_greet')).toEqual({
      name: 'mcp_rich_greet',
      server: 'rich',
      originalName: 'greet',
      title: 'Greeting',
      description: 'Greets someone',
      arguments: [{ name: 'name', required: true }, { name: 'style' }],
    });

    const remote = await sb.json<PromptList>('/prompts?server=remote');
    expect(remote.body.prompts.map((p) => p.name).sort()).toEqual(['mcp_remote_greet', 'mcp_remote_plain']);
    expect((await sb.json<PromptList>('/prompts?server=nobody')).body.prompts).toEqual([]);
    expect((await sb.json<ErrorBody>('/prompts?server=')).body.error.code).toBe('VALIDATION_FAILED');
  });

  it('waits for the startup gate, unless wait=false', async () => {
    const discovery = deferred();
    const sb = await startDaemon({
      until: 'listening',
      discover: async () => {
        await discovery.promise;
        return discoveryOf({ rich: fixtureServerConfig('rich-stdio') });
      },
    });
    const waiting = sb.json<PromptList>('/prompts');
    const waitingResources = sb.json<ResourceList>('/resources');
    const noWait = await sb.json<PromptList>('/prompts?wait=false');
    expect(noWait.body.prompts).toEqual([]);
    expect((await sb.json<ResourceList>('/resources?wait=false')).body).toMatchObject({ resources: [], resourceTemplates: [] });

    discovery.resolve();
    expect((await waiting).body.prompts.map((p) => p.name)).toEqual(['mcp_rich_greet', 'mcp_rich_plain']);
    expect((await waitingResources).body.resources.map((r) => r.uri)).toEqual(['fixture://static/hello', 'fixture://static/blob']);
    await sb.daemon.start();
  });
});

describe('POST /prompts/:name/get', () => {
  it("answers with the server's GetPromptResult as is, in both protocol eras", async () => {
    const { daemon: sb } = await richDaemon();
    for (const server of ['rich', 'remote']) {
      const res = await sb.json(`/prompts/mcp_${server}_greet/get`, { method: 'POST', body: { arguments: { name: 'Ada', style: 'formal' } } });
      expect(res.status, server).toBe(200);
      // A 2026-07-28 result carries more (`_meta` serverInfo, caching hints): passed through too.
      expect(res.body, server).toMatchObject({ description: 'A greeting', messages: [{ role: 'user', content: { type: 'text', text: 'Hello Ada (formal)' } }] });
    }
    const modern = await sb.json<Record<string, unknown>>('/prompts/mcp_remote_plain/get', { method: 'POST', body: {} });
    expect(modern.body._meta).toEqual({ 'io.modelcontextprotocol/serverInfo': { name: 'rich-modern', version: '1.0.0' } });
    // No body at all: no arguments.
    const plain = await sb.json('/prompts/mcp_rich_plain/get', { method: 'POST' });
    expect(plain).toMatchObject({ status: 200, body: { messages: [{ role: 'user', content: { type: 'text', text: 'prompt plain' } }] } });
  });

  it('answers an unknown prompt with 404 PROMPT_NOT_FOUND and bad input with 400', async () => {
    const { daemon: sb } = await richDaemon();
    const missing = await sb.json<ErrorBody>('/prompts/mcp_rich_nope/get', { method: 'POST', body: {} });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({ code: 'PROMPT_NOT_FOUND', message: 'No prompt named "mcp_rich_nope"' });

    const notString = await sb.json<ErrorBody>('/prompts/mcp_rich_greet/get', { method: 'POST', body: { arguments: { name: 3 } } });
    expect(notString.status).toBe(400);
    expect(notString.body.error).toEqual({ code: 'VALIDATION_FAILED', message: 'arguments.name: Expected a string' });
    const unknownField = await sb.json<ErrorBody>('/prompts/mcp_rich_greet/get', { method: 'POST', body: { args: {} } });
    expect(unknownField.body.error).toEqual({ code: 'VALIDATION_FAILED', message: 'args: Unknown field' });
  });

  it('cancels the upstream request when the HTTP client goes away', async () => {
    const { client, request, marker } = await slowPromptGet();
    client.abort();
    await expect(request).rejects.toThrow();
    // The fixture writes the marker when it receives notifications/cancelled.
    expect(await waitForFile(marker)).not.toBe('');
  });
});

describe('GET /resources', () => {
  it('lists resources and templates of every server with their server, filtered by server', async () => {
    const { daemon: sb } = await richDaemon();
    const all = await sb.json<ResourceList>('/resources');
    expect(all.status).toBe(200);
    expect(all.body.resources).toEqual(
      expect.arrayContaining([
        { uri: 'fixture://static/hello', name: 'hello', mimeType: 'text/plain', server: 'rich' },
        { uri: 'remote://static/blob', name: 'blob', mimeType: 'application/octet-stream', server: 'remote' },
      ]),
    );
    expect(all.body.resources).toHaveLength(4);
    expect(all.body.resourceTemplates.sort((a, b) => a.server.localeCompare(b.server))).toEqual([
      { uriTemplate: 'remote://items/{id}', name: 'item', server: 'remote' },
      { uriTemplate: 'fixture://items/{id}', name: 'item', server: 'rich' },
    ]);

    const rich = await sb.json<ResourceList>('/resources?server=rich');
    expect(rich.body.resources.map((r) => r.uri)).toEqual(['fixture://static/hello', 'fixture://static/blob']);
    expect(rich.body.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['fixture://items/{id}']);
  });
});

describe('GET /resources/read', () => {
  it("routes by URI or template and answers with the server's ReadResourceResult as is", async () => {
    const { daemon: sb } = await richDaemon();
    const hello = await sb.json<ReadResult>(`/resources/read?uri=${encodeURIComponent('fixture://static/hello')}`);
    expect(hello).toMatchObject({ status: 200, body: { contents: [{ uri: 'fixture://static/hello', mimeType: 'text/plain', text: 'hello world' }] } });

    const blob = await sb.json<ReadResult>(`/resources/read?uri=${encodeURIComponent('remote://static/blob')}`);
    expect(blob.body).toMatchObject({ contents: [{ uri: 'remote://static/blob', mimeType: 'application/octet-stream', blob: Buffer.from([1, 2, 3]).toString('base64') }] });

    for (const [server, scheme] of [
      ['rich', 'fixture'],
      ['remote', 'remote'],
    ]) {
      const item = await sb.json<ReadResult>(`/resources/read?uri=${encodeURIComponent(`${scheme}://items/42`)}`);
      expect(item.body.contents, server).toEqual([{ uri: `${scheme}://items/42`, mimeType: 'text/plain', text: 'item 42' }]);
    }
  });

  it('answers a URI no server has with 404 RESOURCE_NOT_FOUND, a missing uri with 400', async () => {
    const { daemon: sb } = await richDaemon();
    const missing = await sb.json<ErrorBody>(`/resources/read?uri=${encodeURIComponent('nope://x')}`);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({ code: 'RESOURCE_NOT_FOUND', message: 'No server has the resource "nope://x"' });
    const noUri = await sb.json<ErrorBody>('/resources/read');
    expect(noUri.status).toBe(400);
    expect(noUri.body.error).toEqual({ code: 'VALIDATION_FAILED', message: 'uri: Required' });
  });

  it('reads a resource a tool result linked to, though no list shows it', async () => {
    // The file's daemon: no other test calls `link` or reads what it links to.
    const { daemon: sb } = await richDaemon();
    const uri = encodeURIComponent('fixture://hidden/secret');
    expect((await sb.json<ErrorBody>(`/resources/read?uri=${uri}`)).status).toBe(404);
    expect((await sb.json('/tools/mcp_rich_link/call', { method: 'POST', body: {} })).status).toBe(200);
    const read = await sb.json<ReadResult>(`/resources/read?uri=${uri}`);
    expect(read.body.contents).toEqual([{ uri: 'fixture://hidden/secret', mimeType: 'text/plain', text: 'the secret' }]);
  });
});

describe('prompts and resources take the one request path (issue #20)', () => {
  const sample = (text: string, name: string): string | undefined =>
    text
      .split('\n')
      .find((line) => line.startsWith(`${name} `))
      ?.split(' ')[1];

  it('counts each request in /metrics by method and outcome', async () => {
    const sb = await startDaemon({ servers: { rich: fixtureServerConfig('rich-stdio') } });
    expect((await sb.json('/prompts/mcp_rich_greet/get', { method: 'POST', body: { arguments: { name: 'Ada' } } })).status).toBe(200);
    expect((await sb.json(`/resources/read?uri=${encodeURIComponent('fixture://static/hello')}`)).status).toBe(200);
    expect((await sb.json('/prompts/mcp_rich_nope/get', { method: 'POST', body: {} })).status).toBe(404);
    const text = await (await sb.fetch('/metrics')).text();
    expect(sample(text, 'switchboard_upstream_requests_total{transport="rest",server="rich",method="prompts/get",outcome="ok"}')).toBe('1');
    expect(sample(text, 'switchboard_upstream_requests_total{transport="rest",server="rich",method="resources/read",outcome="ok"}')).toBe('1');
    expect(sample(text, 'switchboard_upstream_requests_total{transport="rest",server="",method="prompts/get",outcome="not_found"}')).toBe('1');
  });

  it('counts a prompt get in flight while it runs, as the drain sees it', async () => {
    const { sb, client, request } = await slowPromptGet();
    expect(sample(await (await sb.fetch('/metrics')).text(), 'switchboard_tool_calls_in_flight')).toBe('1');
    client.abort();
    await expect(request).rejects.toThrow();
  });
});
