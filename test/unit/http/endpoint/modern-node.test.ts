import { once } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { modernNodeHandler } from '../../../../src/http/endpoint/modern-node.js';
import { rawRequest } from '../../../helpers/raw-http.js';
import { answersOnlyAnAbort, sseMessages } from '../../../helpers/sdk-server-handlers.js';

/**
 * Issue #44 item 1: the SDK's 2026-07-28 handler served from Node's request and response by
 * modern-node.ts — a real HTTP server, the SDK's `createMcpHandler` and `Server`, raw HTTP clients.
 */

const MODERN = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN };

/** An HTTP server whose every POST goes to the SDK's modern handler through `modernNodeHandler`, the body parsed first as fastify does. */
async function serve(setup: (server: Server) => void): Promise<{ url: string; errors: Error[] }> {
  const errors: Error[] = [];
  const handler = createMcpHandler(
    () => {
      const server = new Server({ name: 'modern-node-test', version: '1.0.0' }, { capabilities: { tools: {} } });
      setup(server);
      return server;
    },
    { legacy: 'reject' },
  );
  const serveModern = modernNodeHandler(handler, (err) => errors.push(err));
  const http = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    req.on('end', () => void serveModern(req, res, JSON.parse(text)));
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  onTestFinished(async () => {
    http.closeAllConnections();
    await Promise.all([new Promise((resolve) => http.close(resolve)), handler.close()]);
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, errors };
}

function listTools(id: number): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: envelope } });
}

describe('modernNodeHandler', () => {
  it('writes a JSON answer whole, with its Content-Length, not in chunks', async () => {
    const { url } = await serve((server) => server.setRequestHandler('tools/list', () => ({ tools: [] })));
    const res = await rawRequest(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'tools/list' }, body: listTools(1) });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['transfer-encoding']).toBeUndefined();
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: '2.0', id: 1, result: { tools: [] } });
  });

  it("leaves the checks to the SDK: a header that contradicts the body is the SDK's -32020 refusal", async () => {
    const { url } = await serve((server) => server.setRequestHandler('tools/list', () => ({ tools: [] })));
    const res = await rawRequest(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'tools/call' }, body: listTools(2) });
    expect(res.status).toBe(400);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    expect(JSON.parse(res.body)).toMatchObject({ id: 2, error: { code: -32020 } });
  });

  it('streams an answer with notifications before it as SSE, each frame as it comes', async () => {
    const { url } = await serve((server) =>
      server.setRequestHandler('tools/call', async (_request, ctx) => {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } });
        return { content: [{ type: 'text', text: 'done' }] };
      }),
    );
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'work', arguments: {}, _meta: { ...envelope, progressToken: 'p' } } });
    const res = await rawRequest(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'work' }, body });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(sseMessages(res.body)).toMatchObject([
      { method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } },
      { id: 3, result: { content: [{ text: 'done' }] } },
    ]);
  });

  it("aborts the handler's work when the client goes away before the answer", async () => {
    const { handler, started, aborted } = answersOnlyAnAbort();
    const { url } = await serve((server) => server.setRequestHandler('tools/call', handler));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'wait', arguments: {}, _meta: envelope } });
    const req = request(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'wait' }, agent: false });
    req.on('error', () => undefined);
    req.on('response', (res: IncomingMessage) => res.resume());
    req.end(body);
    await started.promise;
    req.destroy();
    await aborted.promise;
  });
});
