import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { isSwitchboardError } from '../../src/errors.js';
import { connectToServer, type ServerConnection } from '../../src/upstream/transport/client.js';
import { connectFixture, textOf } from '../helpers/connect.js';
import { startFixtureHttp } from '../helpers/fixtures.js';

const HEADER = 'x-switchboard-test';
const HEADER_VALUE = 'let-me-in';

/** Lists and calls the echo tool set, which every echo fixture serves. */
async function exerciseEcho(connection: ServerConnection): Promise<void> {
  const { tools } = await connection.listTools();
  expect(tools.map((t) => t.name)).toEqual(['echo', 'add', 'reverse']);
  expect(tools.find((t) => t.name === 'reverse')?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  expect(textOf(await connection.callTool('echo', { text: 'hello' }))).toBe('hello');
  const sum = await connection.callTool('add', { a: 2, b: 40 });
  expect(sum.structuredContent).toEqual({ sum: 42 });
  await connection.ping();
}

describe('stdio', () => {
  it('connects, lists and calls', async () => {
    const connection = await connectFixture('echo-stdio');
    expect(connection.transport).toBe('stdio');
    expect(connection.serverInfo).toMatchObject({ name: 'echo-stdio', version: '1.0.0' });
    expect(connection.capabilities?.tools).toBeDefined();
    expect(connection.pid).toBeGreaterThan(0);
    await exerciseEcho(connection);
  });

  it('answers roots/list with the configured roots as file:// URIs', async () => {
    const connection = await connectFixture('introspect', {}, { roots: ['/srv/project one', '/tmp'] });
    const roots = JSON.parse(textOf(await connection.callTool('roots', {})));
    expect(roots).toEqual([
      { uri: 'file:///srv/project%20one', name: 'project one' },
      { uri: 'file:///tmp', name: 'tmp' },
    ]);
  });
});

describe('Streamable HTTP', () => {
  let url: string;
  beforeAll(async () => {
    const server = await startFixtureHttp('echo-http', { env: { REQUIRED_HEADER: `${HEADER}=${HEADER_VALUE}` } });
    url = server.url;
    return () => server.close();
  });

  it('connects, lists and calls, sending the configured headers', async () => {
    const connection = await connectToServer('remote', { type: 'http', url, headers: { [HEADER]: HEADER_VALUE } });
    onTestFinished(() => connection.close());
    expect(connection.transport).toBe('http');
    expect(connection.pid).toBeUndefined();
    expect(connection.serverInfo?.name).toBe('echo-http');
    await exerciseEcho(connection);
  });

  it('defaults to http when only a url is configured', async () => {
    const connection = await connectToServer('remote', { url, headers: { [HEADER]: HEADER_VALUE } });
    onTestFinished(() => connection.close());
    expect(connection.transport).toBe('http');
  });

  it('fails with UPSTREAM_CONNECT_FAILED when the server refuses us', async () => {
    const error = await connectToServer('remote', { type: 'http', url }).catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'UPSTREAM_CONNECT_FAILED')).toBe(true);
  });
});

describe('legacy SSE', () => {
  let sseUrl: string;
  beforeAll(async () => {
    const server = await startFixtureHttp('echo-sse', { env: { REQUIRED_HEADER: `${HEADER}=${HEADER_VALUE}` } });
    sseUrl = server.url;
    return () => server.close();
  });

  it('connects, lists and calls, with the headers on both the event stream and the POSTs', async () => {
    // The fixture answers 401 to any request without the header, GET or POST.
    const connection = await connectToServer('legacy', { type: 'sse', url: sseUrl, headers: { [HEADER]: HEADER_VALUE } });
    onTestFinished(() => connection.close());
    expect(connection.transport).toBe('sse');
    expect(connection.serverInfo?.name).toBe('echo-sse');
    await exerciseEcho(connection);
  });
});

describe('http → sse fallback', () => {
  // One SSE-only server for the three: the status its initialize POST gets is the URL's `postStatus`.
  let sseOnly: string;
  beforeAll(async () => {
    const server = await startFixtureHttp('echo-sse');
    sseOnly = server.url;
    return () => server.close();
  });
  const answering = (status: string): string => `${sseOnly}?postStatus=${status}`;

  it.each(['405', '404'])('falls back to legacy SSE when initialize gets HTTP %s', async (status) => {
    const connection = await connectToServer('legacy', { type: 'http', url: answering(status) });
    onTestFinished(() => connection.close());
    expect(connection.transport).toBe('sse');
    expect(textOf(await connection.callTool('echo', { text: 'via sse' }))).toBe('via sse');
  });

  it('does not fall back when the server fails with a 5xx', async () => {
    const error = await connectToServer('legacy', { type: 'http', url: answering('503') }).catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'UPSTREAM_CONNECT_FAILED')).toBe(true);
    expect((error as Error).message).toMatch(/503/);
  });
});
