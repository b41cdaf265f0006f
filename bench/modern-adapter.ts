/**
 * `node --import tsx bench/modern-adapter.ts`: server CPU per 2026-07-28 `tools/call` through the SDK's
 * `createMcpHandler` with a trivial handler, behind `toNodeHandler` (old) and behind
 * src/http/endpoint/modern-node.ts (new), two processes side by side, rounds alternated (issue #44).
 * N calls per round (default 2000), R rounds (default 7), one keep-alive socket each.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
const cpu = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const env = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'r', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hello' }, _meta: env } });
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
  'content-length': String(Buffer.byteLength(body)),
};
async function start(v: string) {
  const c = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./lib/modern-adapter-server.ts', import.meta.url)), v], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((r) => createInterface({ input: c.stdout! }).once('line', r));
  return { c, port: (JSON.parse(line) as { port: number }).port, agent: new Agent({ keepAlive: true, maxSockets: 1 }) };
}
const one = (s: Awaited<ReturnType<typeof start>>) =>
  new Promise<void>((resolve, reject) => {
    const q = request({ host: '127.0.0.1', port: s.port, path: '/mcp', method: 'POST', headers, agent: s.agent }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    q.on('error', reject);
    q.end(body);
  });
const sides = { old: await start('old'), new: await start('new') };
const N = Number(process.env.N ?? 2000),
  R = Number(process.env.R ?? 7);
for (const s of Object.values(sides)) for (let i = 0; i < 500; i++) await one(s);
const res: { old: number[]; new: number[] } = { old: [], new: [] };
for (let r = 0; r < R; r++)
  for (const k of (r % 2 ? ['new', 'old'] : ['old', 'new']) as ('old' | 'new')[]) {
    const s = sides[k];
    const c0 = cpu(s.c.pid!);
    for (let i = 0; i < N; i++) await one(s);
    res[k].push(((cpu(s.c.pid!) - c0) * 1000) / N);
  }
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
console.log(
  `server CPU per modern tools/call (µs), median of ${R} × ${N}: toNodeHandler ${med(res.old).toFixed(0)}, modernNodeHandler ${med(res.new).toFixed(0)}, new/old ${(med(res.new) / med(res.old)).toFixed(2)}; load ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
);
for (const s of Object.values(sides)) {
  s.agent.destroy();
  s.c.kill();
}
