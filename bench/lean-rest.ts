// Issue #27's "second setup", approximated: server-everything upstream, three paths only
// (direct, Switchboard REST, mcp-hub REST), 1000-call blocks, alternated.
import { directPath, mcpHubRestPath, switchboardRestPath } from './lib/call-paths.js';
import { connectDirectTo } from './lib/direct.js';
import { echoStdioUpstream, everythingUpstream } from './lib/echo.js';
import { createHttpClient } from './lib/http.js';
import { runRounds } from './lib/load.js';
import { mcpHubReady, startMcpHub } from './lib/peers.js';
import { startServe } from './lib/serve.js';
import { buildFixtures } from '../test/helpers/build-fixtures.js';
await buildFixtures();
const up = process.env.UP === 'fixture' ? echoStdioUpstream() : everythingUpstream();
const serve = await startServe({ servers: { echo: up.server } });
const hub = await startMcpHub({ echo: up.server });
const direct = await connectDirectTo(up.server);
try {
  const url = await serve.listening;
  const hubUrl = await hub.listening;
  const probe = createHttpClient(hubUrl);
  await mcpHubReady(hub, probe, 1);
  probe.close();
  const paths = [directPath(direct, 'direct', up), switchboardRestPath(url, serve.pid, 1, 'sb', up), mcpHubRestPath(hubUrl, hub.pid, 1, 'echo', 'hub', up)];
  for (const p of paths) await p.check();
  // IDLE_MS: a pause path in the rotation, as B7's four /mcp paths leave every REST front idle between its blocks.
  const idleMs = Number(process.env.IDLE_MS ?? 0);
  if (idleMs > 0)
    paths.push({
      id: 'idle',
      frontPid: Number.NaN,
      call: () => new Promise((r) => setTimeout(r, idleMs / Number(process.env.CALLS ?? 1000))),
      check: async () => undefined,
      close: async () => undefined,
    });
  const r = await runRounds(paths, { rounds: Number(process.env.ROUNDS ?? 5), callsPerRound: Number(process.env.CALLS ?? 1000), warmupCalls: 1000 });
  const d = r.get('direct')!.stats.p50;
  for (const id of ['sb', 'hub']) {
    const x = r.get(id)!;
    console.log(up.label, id, 'p50', x.stats.p50.toFixed(3), 'overhead', (x.stats.p50 - d).toFixed(3), 'front CPU', x.frontCpuPerCallMs.toFixed(3));
  }
  console.log(up.label, 'direct p50', d.toFixed(3));
  for (const p of paths) await p.close();
} finally {
  await direct.close();
  await hub.stop();
  await serve.stop();
}
