import { it } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
it('times', async () => {
  for (const name of ['echo-stdio', 'rich-stdio', 'slow-tool', 'echo-stdio']) {
    let t = performance.now(); let c = cpu();
    const sb = await startDaemon({ servers: { a: fixtureServerConfig(name) }, lifetime: 'manual' });
    const a = performance.now() - t; const ac = cpu() - c; t = performance.now(); c = cpu();
    await sb.fetch('/tools');
    const b = performance.now() - t; t = performance.now(); c = cpu();
    await sb.close();
    const d = performance.now() - t; const dc = cpu() - c;
    console.log(`${name}: start ${a.toFixed(0)} (worker cpu ${ac.toFixed(0)}) list ${b.toFixed(0)} close ${d.toFixed(0)} (cpu ${dc.toFixed(0)})`);
  }
});
