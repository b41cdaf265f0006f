import { Client, ProtocolError, StreamableHTTPClientTransport, type StandardSchemaV1 } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { deferred } from '../../src/util/deferred.js';
import { startDaemon, type TestDaemon, startEchoDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { sharedByTests } from '../helpers/shared.js';

/**
 * Issue #14 items 2, 5 and 8: `/mcp` aggregates prompts, resources, templates and completions
 * like tools, and passes what servers say through untouched — against a real daemon, the rich
 * fixture as real processes (stdio and HTTP, both eras) and real SDK clients as the agents.
 */

const Raw: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value: value as Record<string, unknown> }) },
};

type Mode = 'legacy' | { pin: string };
const ERAS: Array<[string, Mode]> = [
  ['2025-11-25', 'legacy'],
  ['2026-07-28', { pin: '2026-07-28' }],
];

async function agent(daemon: TestDaemon, mode: Mode): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', daemon.url)));
  onTestFinished(() => client.close());
  return client;
}

const rich = (env: Record<string, string> = {}) => fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy', ...env } });

/** The rich server alone, shared by the tests that only read and call through it (each with its own session). */
const richDaemon = sharedByTests(
  () => startDaemon({ servers: { rich: rich() }, lifetime: 'manual' }),
  (d) => d.close(),
);
/** The rich and the echo server, shared by both eras' routing test (it only reads). */
const richEchoDaemon = sharedByTests(
  () => startDaemon({ servers: { rich: rich(), echo: fixtureServerConfig('echo-stdio') }, lifetime: 'manual' }),
  (d) => d.close(),
);

describe.each(ERAS)('/mcp prompts, resources and completions (%s client)', (_era, mode) => {
  it('advertises what the servers have, lists prompts and resources, and routes get, read and complete to the owner', async () => {
    const daemon = await richEchoDaemon();
    const client = await agent(daemon, mode);
    expect(client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
      completions: {},
      logging: {},
    });

    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['mcp_rich_greet', 'mcp_rich_plain']);
    expect(prompts[0]).toEqual({ name: 'mcp_rich_greet', title: 'Greeting', description: 'Greets someone', arguments: [{ name: 'name', required: true }, { name: 'style' }] });
    const greeting = await client.getPrompt({ name: 'mcp_rich_greet', arguments: { name: 'Ada', style: 'warm' } });
    expect(greeting.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Hello Ada (warm)' } }]);

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['fixture://static/hello', 'fixture://static/blob']);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([{ uriTemplate: 'fixture://items/{id}', name: 'item' }]);
    expect((await client.readResource({ uri: 'fixture://static/hello' })).contents).toEqual([{ uri: 'fixture://static/hello', mimeType: 'text/plain', text: 'hello world' }]);
    expect((await client.readResource({ uri: 'fixture://static/blob' })).contents[0]).toMatchObject({ blob: Buffer.from([1, 2, 3]).toString('base64') });
    // A URI no list names, routed by the template it matches.
    expect((await client.readResource({ uri: 'fixture://items/7' })).contents).toEqual([{ uri: 'fixture://items/7', mimeType: 'text/plain', text: 'item 7' }]);

    const names = await client.complete({ ref: { type: 'ref/prompt', name: 'mcp_rich_greet' }, argument: { name: 'name', value: 'al' } });
    expect(names.completion.values).toEqual(['alice', 'albert']);
    const ids = await client.complete({ ref: { type: 'ref/resource', uri: 'fixture://items/{id}' }, argument: { name: 'id', value: '1' } });
    expect(ids.completion.values).toEqual(['1', '10']);
  });

  it('answers an unknown prompt or resource with a protocol error naming it', async () => {
    const daemon = await richDaemon();
    const client = await agent(daemon, mode);
    const prompt = await client.getPrompt({ name: 'mcp_rich_nope' }).catch((err: unknown) => err);
    expect(prompt).toBeInstanceOf(ProtocolError);
    expect((prompt as ProtocolError).code).toBe(-32602);
    expect((prompt as ProtocolError).message).toContain('No prompt named "mcp_rich_nope"');
    const resource = await client.readResource({ uri: 'elsewhere://nothing' }).catch((err: unknown) => err);
    expect(resource).toBeInstanceOf(ProtocolError);
    expect((resource as ProtocolError).message).toContain('elsewhere://nothing');
    // A URI the owner itself does not know: the server's own error passes through.
    const missing = await client.readResource({ uri: 'fixture://items/' }).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(ProtocolError);
  });

  it('keeps a resource_link of a tool result readable through Switchboard', async () => {
    const daemon = await richDaemon();
    const client = await agent(daemon, mode);
    const result = await client.callTool({ name: 'mcp_rich_link', arguments: {} });
    expect(result.content).toEqual([{ type: 'resource_link', uri: 'fixture://hidden/secret', name: 'secret', mimeType: 'text/plain' }]);
    expect((await client.readResource({ uri: 'fixture://hidden/secret' })).contents).toEqual([{ uri: 'fixture://hidden/secret', mimeType: 'text/plain', text: 'the secret' }]);
  });

  it('passes tool definitions and results through untouched: title, icons, annotations, schemas, _meta, structuredContent', async () => {
    const daemon = await richDaemon();
    const client = await agent(daemon, mode);
    const { tools } = await client.listTools();
    const structured = tools.find((t) => t.name === 'mcp_rich_structured');
    expect(structured).toMatchObject({
      title: 'Structured result',
      description: 'Returns structuredContent and _meta',
      inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' },
      outputSchema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] },
      annotations: { readOnlyHint: true, title: 'Annotated title' },
      icons: [{ src: 'https://example.com/icon.png', mimeType: 'image/png' }],
    });
    expect(structured?._meta).toMatchObject({ 'fixture/tool': true });
    // No title of our own where the server gave none.
    expect(tools.find((t) => t.name === 'mcp_rich_link')).not.toHaveProperty('title');
    const result = await client.request({ method: 'tools/call', params: { name: 'mcp_rich_structured', arguments: {} } }, Raw);
    expect(result).toMatchObject({ structuredContent: { answer: 42 }, content: [{ type: 'text', text: '{"answer":42}' }], _meta: { 'fixture/result': 'kept' } });
  });
});

describe('/mcp catalogue changes and names', () => {
  it('relays prompts and resources list_changed, with the new items listed', async () => {
    const daemon = await startDaemon({ servers: { rich: rich() } });
    const client = await agent(daemon, 'legacy');
    const prompts = deferred();
    const resources = deferred();
    client.setNotificationHandler('notifications/prompts/list_changed', () => prompts.resolve());
    client.setNotificationHandler('notifications/resources/list_changed', () => resources.resolve());
    await client.callTool({ name: 'mcp_rich_add_prompt', arguments: { name: 'fresh' } });
    await prompts.promise;
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('mcp_rich_fresh');
    await client.callTool({ name: 'mcp_rich_add_resource', arguments: { path: 'static/fresh' } });
    await resources.promise;
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain('fixture://static/fresh');
  });

  it("relays a server's list_changed even when the list it then lists is the same", async () => {
    // The server announces a change and changes nothing: the shared daemon's catalogue stays as it was.
    const daemon = await richDaemon();
    const client = await agent(daemon, 'legacy');
    const changed = deferred();
    client.setNotificationHandler('notifications/tools/list_changed', () => changed.resolve());
    await client.callTool({ name: 'mcp_rich_announce', arguments: {} });
    await changed.promise;
  });

  it('relays a modern server\u2019s list changes to a modern client\u2019s listen stream', async () => {
    const upstream = await startFixtureHttp('rich-http', { env: { ERA: 'modern' } });
    onTestFinished(() => upstream.close());
    const daemon = await startDaemon({ servers: { rich: { type: 'http', url: upstream.url } } });
    expect((await daemon.json<{ protocol: { era: string } }>('/servers/rich')).body.protocol.era).toBe('modern');
    const client = await agent(daemon, { pin: '2026-07-28' });
    const prompts = deferred();
    client.setNotificationHandler('notifications/prompts/list_changed', () => prompts.resolve());
    const subscription = await client.listen({ promptsListChanged: true });
    onTestFinished(() => subscription.close());
    await client.callTool({ name: 'mcp_rich_add_prompt', arguments: { name: 'later' } });
    await prompts.promise;
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('mcp_rich_later');
  });

  it('exposes original names under toolPrefix "", resolves collisions deterministically and lists them in /status', async () => {
    const daemon = await startDaemon({
      servers: {
        a: { ...rich(), toolPrefix: '' },
        b: { ...rich(), toolPrefix: '' },
        other: rich({ URI_SCHEME: 'other' }),
      },
      // 42 tools: above `searchAbove`, so the default `auto` would list search mode's meta-tools.
      config: { catalogue: 'full' },
    });
    const client = await agent(daemon, 'legacy');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('progress');
    expect(names).toContain('mcp_other_progress');
    const twin = names.filter((n) => n.startsWith('progress'));
    expect(twin).toHaveLength(2);
    const { body: status } = await daemon.json<{
      collisions: Array<{ name: string; tools: Array<{ server: string; exposedName: string }> }>;
      promptCollisions: Array<{ name: string }>;
      resourceCollisions: Array<{ uri: string; servers: string[] }>;
    }>('/status');
    const progress = status.collisions.find((c) => c.name === 'progress');
    expect(progress?.tools.map((t) => t.server)).toEqual(['a', 'b']);
    expect(progress?.tools[0]?.exposedName).toBe('progress');
    expect(status.promptCollisions.map((c) => c.name)).toContain('greet');
    expect(status.resourceCollisions).toContainEqual({ uri: 'fixture://static/hello', servers: ['a', 'b'] });
    // The URI two servers list is served by the first by name.
    expect((await client.readResource({ uri: 'fixture://static/hello' })).contents[0]).toMatchObject({ text: 'hello world' });
  });

  it('says "no tool" once, and advertises no prompts or resources when no server has them', async () => {
    const daemon = await startEchoDaemon();
    const client = await agent(daemon, 'legacy');
    const err = (await client.callTool({ name: 'mcp_echo_nope', arguments: {} }).catch((e: unknown) => e)) as ProtocolError;
    expect(err.code).toBe(-32602);
    expect(err.message.match(/No tool named/g)).toHaveLength(1);
    expect(err.message.match(/-32602/g)?.length ?? 0).toBeLessThanOrEqual(1);
    // Tools, and the tasks the gateway always offers (issue #41): the extension, and to a 2025-era
    // session the 2025-11-25 task surface too.
    expect(client.getServerCapabilities()).toEqual({
      tools: { listChanged: true },
      extensions: { 'io.modelcontextprotocol/tasks': {} },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
    const prompts = (await client.request({ method: 'prompts/list', params: {} }, Raw).catch((e: unknown) => e)) as ProtocolError;
    expect(prompts.code).toBe(-32601);
  });
});
