/** The HTTP server of bench/modern-adapter.ts: argv[2] `old` (toNodeHandler) or `new` (modern-node.ts). */
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { modernNodeHandler } from '../../src/http/endpoint/modern-node.js';
const server = new Server({ name: 'x', version: '1' }, { capabilities: { tools: {} } });
server.setRequestHandler('tools/call', () => ({ content: [{ type: 'text', text: 'Echo: hello' }] }));
const handler = createMcpHandler(() => server, { legacy: 'reject' });
const serve = process.argv[2] === 'old' ? toNodeHandler(handler) : modernNodeHandler(handler, () => undefined);
const http = createServer((req, res) => {
  let t = '';
  req.setEncoding('utf8').on('data', (c: string) => (t += c));
  req.on('end', () => void serve(req, res, JSON.parse(t)));
});
http.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: (http.address() as { port: number }).port })));
