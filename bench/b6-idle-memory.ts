import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerConfig } from '../src/config/types.js';
import { fixtureServerConfig } from '../test/helpers/fixtures.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { createHttpClient, expectStatus } from './lib/http.js';
import { childPids, statusBytes } from './lib/proc.js';
import { startServe } from './lib/serve.js';
import { median } from './lib/stats.js';
import { kib, mib, verdict, type Row } from './lib/table.js';

/**
 * B6 — memory per connected, idle server: the RSS of a real `switchboard serve` process alone
 * (its stdio children are separate processes, reported apart) with 0, 10 and 40 idle echo-stdio
 * servers. Each reading follows a full GC in the daemon (started with --expose-gc and a SIGUSR2
 * hook); the figure is the median of several readings. Per server = the slope between 10 and 40
 * servers, so one-off costs of the first connection (code paths compiled, buffers allocated)
 * stay out of it; the 0 → 10 slope is shown beside it.
 */
const SIZES = [0, 10, 40] as const;
const READINGS = 5;
const SETTLE_MS = 1000;
/** Issue #6: report; investigate above 2 MB per server. */
const INVESTIGATE_ABOVE_BYTES = 2 * 1024 * 1024;

interface Reading {
  rssBytes: number;
  childRssBytes: number;
}

export const b6: Benchmark = {
  id: 'B6',
  title: 'daemon memory per connected idle server',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const readings: Record<number, Reading> = {};
    for (const size of SIZES) {
      readings[size] = await measure(size);
      ctx.log(`  ${size} servers: daemon RSS ${mib(readings[size].rssBytes)}, mean child RSS ${mib(readings[size].childRssBytes)}`);
    }
    const r0 = readings[0]!;
    const r10 = readings[10]!;
    const r40 = readings[40]!;
    const perServer = (r40.rssBytes - r10.rssBytes) / 30;
    const firstTen = (r10.rssBytes - r0.rssBytes) / 10;
    const rows: Row[] = [
      {
        id: 'B6',
        metric: 'daemon RSS per idle server (slope 10 → 40 servers)',
        value: kib(perServer),
        baseline: `daemon with 0 servers ${mib(r0.rssBytes)}`,
        ratio: `0 → 10 slope ${kib(firstTen)}`,
        target: 'report; investigate > 2 MiB',
        verdict: perServer > INVESTIGATE_ABOVE_BYTES ? verdict(false) : 'report',
      },
      {
        id: 'B6',
        metric: 'daemon RSS with 10 / 40 idle servers',
        value: `${mib(r10.rssBytes)} / ${mib(r40.rssBytes)}`,
        baseline: `0 servers ${mib(r0.rssBytes)}`,
        ratio: '—',
        target: '—',
        verdict: 'report',
      },
      {
        id: 'B6',
        metric: 'for scale: RSS of one echo-stdio child (not counted above)',
        value: mib(r40.childRssBytes),
        baseline: '—',
        ratio: '—',
        target: '—',
        verdict: 'report',
      },
    ];
    return { rows, data: { readings, perServerBytes: perServer, firstTenPerServerBytes: firstTen } };

    async function measure(size: number): Promise<Reading> {
      const servers: Record<string, ServerConfig> = {};
      for (let i = 1; i <= size; i++) {
        const name = `idle${String(i).padStart(2, '0')}`;
        servers[name] = fixtureServerConfig('echo-stdio', { env: { BENCH_INSTANCE: name } });
      }
      const serve = await startServe({ servers, exposeGc: true });
      try {
        const http = createHttpClient(await serve.listening);
        try {
          expectStatus(await http.get('/tools'), 200, 'GET /tools');
          for (;;) {
            const { servers: list } = JSON.parse(expectStatus(await http.get('/servers'), 200, 'GET /servers').body.toString('utf8')) as {
              servers: Array<{ status: string }>;
            };
            if (list.length === size && list.every((s) => s.status === 'connected')) break;
            await sleep(50);
          }
        } finally {
          http.close();
        }
        await sleep(SETTLE_MS);
        const rss: number[] = [];
        for (let i = 0; i < READINGS; i++) {
          await serve.gc();
          await sleep(100);
          rss.push(statusBytes(serve.pid, 'VmRSS'));
        }
        const children = childPids(serve.pid)
          .map((pid) => statusBytes(pid, 'VmRSS'))
          .filter(Number.isFinite);
        return { rssBytes: median(rss), childRssBytes: children.length > 0 ? median(children) : Number.NaN };
      } finally {
        const stopped = await serve.stop();
        if (stopped.orphans > 0) ctx.log(`  warning: ${stopped.orphans} child process(es) outlived the daemon`);
      }
    }
  },
};
