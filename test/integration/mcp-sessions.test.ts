import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { mcpRoutes } from '../../src/http/routes/mcp.js';
import { MCPManager } from '../../src/upstream/manager.js';
import { EventBus } from '../../src/events/event-bus.js';
import { testGateway } from '../helpers/gateway.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function mcpApp(maxSessions: number): Promise<string> {
  const app = Fastify();
  const manager = new MCPManager();
  const shutdownSignal = new AbortController().signal;
  const runtime = { state: 'ready', whenReady: () => Promise.resolve() } as const;
  await app.register(mcpRoutes, {
    manager,
    bus: new EventBus(),
    runtime,
    shutdownSignal,
    gateway: testGateway(manager, { runtime, shutdownSignal }),
    maxSessions,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onTestFinished(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`;
}

/** A raw `initialize` POST, answered as it is. */
function postInitialize(url: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: MCP_HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    }),
  });
}

async function initialize(url: string): Promise<string> {
  const res = await postInitialize(url);
  await res.text();
  expect(res.status).toBe(200);
  return res.headers.get('mcp-session-id') as string;
}

function listTools(url: string, sessionId: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
}

describe('/mcp sessions', () => {
  it('evicts the longest-idle session when full, so abandoned sessions never lock new clients out', async () => {
    const url = await mcpApp(2);
    const first = await initialize(url);
    const second = await initialize(url);
    // The first is used again, so the second is now the longest idle.
    expect((await listTools(url, first)).status).toBe(200);

    const third = await initialize(url);

    expect(new Set([first, second, third]).size).toBe(3);
    expect((await listTools(url, second)).status).toBe(404);
    expect((await listTools(url, first)).status).toBe(200);
    expect((await listTools(url, third)).status).toBe(200);
  });

  it('refuses an initialize with 503 TOO_MANY_MCP_SESSIONS when every session is busy', async () => {
    const url = await mcpApp(1);
    const busy = await initialize(url);
    // An open GET stream keeps its session busy: it cannot be evicted.
    const stream = new AbortController();
    onTestFinished(() => stream.abort());
    const open = await fetch(url, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': busy, 'mcp-protocol-version': '2025-06-18' },
      signal: stream.signal,
    });
    expect(open.status).toBe(200);

    const refused = await postInitialize(url);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Too many MCP sessions', data: { code: 'TOO_MANY_MCP_SESSIONS' } } });
    expect((await listTools(url, busy)).status).toBe(200);
  });
});
