import { performance } from 'node:perf_hooks';
import { fixtureServerConfig } from '../test/helpers/fixtures.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { createHttpClient, expectStatus, type HttpClient } from './lib/http.js';
import { startServe } from './lib/serve.js';
import { sawAdded, subscribe, subscribeMany, withTimeout, type Subscriber } from './lib/subscribers.js';
import { summarize, type Summary } from './lib/stats.js';
import { ms, ratio, verdict, type Row } from './lib/table.js';

/**
 * B5 — one `tools.changed` event fanned out to 200 WebSocket subscribers of `/events` (ws
 * clients in the bench process) by a real `switchboard serve`. The event comes from the
 * `list-changed` fixture: calling its `add_tool` makes it send `notifications/tools/list_changed`,
 * the daemon re-lists and emits `tools.changed`. Delivery latency is the time a subscriber got
 * the message minus the event's own `ts` (wall clock, ms resolution, so up to 1 ms high); the last
 * subscriber's figure includes the bench process reading the other 199. Baseline: the same events
 * to a single subscriber, same daemon, same run.
 */
const SUBSCRIBERS = 200;
const EVENTS = 30;
/** Issue #6: p99 delivery ≤ 50 ms. */
const TARGET_P99_MS = 50;
const TOOL = 'mcp_lc_add_tool';
/** A lost event fails the benchmark instead of hanging it. */
const EVENT_TIMEOUT_MS = 10_000;

export const b5: Benchmark = {
  id: 'B5',
  title: `tools.changed fan-out to ${SUBSCRIBERS} WebSocket subscribers`,
  async run(ctx: BenchContext): Promise<BenchResult> {
    const serve = await startServe({ servers: { lc: fixtureServerConfig('list-changed') }, ...(ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {}) });
    let http: HttpClient | undefined;
    const subscribers: Subscriber[] = [];
    try {
      const url = await serve.listening;
      const client = createHttpClient(url, { connections: 1 });
      http = client;
      expectStatus(await client.get('/tools'), 200, 'GET /tools');
      let counter = 0;
      const runEvents = async (count: number, label: string): Promise<{ samples: number[]; triggerToLast: number[] }> => {
        const samples: number[] = [];
        const triggerToLast: number[] = [];
        for (let i = 0; i < count; i++) {
          const name = `bench_${label}_${++counter}`;
          // The event names the tool as exposed: mcp_<server>_<tool>.
          const exposed = `mcp_lc_${name}`;
          const all = Promise.all(subscribers.map((s) => sawAdded(s, exposed)));
          const t0 = performance.now();
          expectStatus(await client.postJson(`/tools/${TOOL}/call`, { arguments: { name } }), 200, `POST ${TOOL}`);
          await withTimeout(all, EVENT_TIMEOUT_MS, `${name}: not every subscriber got its tools.changed event`);
          triggerToLast.push(performance.now() - t0);
          for (const s of subscribers) samples.push(s.deliveries.get(exposed) as number);
        }
        return { samples, triggerToLast };
      };

      subscribers.push(await subscribe(url));
      await runEvents(3, 'warmup');
      const single = await runEvents(EVENTS, 'one');
      subscribers.push(...(await subscribeMany(url, SUBSCRIBERS - subscribers.length)));
      await runEvents(3, 'warmup');
      const fanned = await runEvents(EVENTS, 'many');
      const one = summarize(single.samples);
      const many = summarize(fanned.samples);
      const triggerOne = summarize(single.triggerToLast);
      const triggerMany = summarize(fanned.triggerToLast);
      ctx.log(`  1 subscriber: p50 ${ms(one.p50)} p99 ${ms(one.p99)}; ${SUBSCRIBERS}: p50 ${ms(many.p50)} p99 ${ms(many.p99)} max ${ms(many.max)}`);
      const rows: Row[] = [
        {
          id: 'B5',
          metric: `tools.changed delivery p99, ${SUBSCRIBERS} subscribers`,
          value: ms(many.p99),
          baseline: `1 subscriber ${ms(one.p99)}`,
          ratio: ratio(many.p99, one.p99),
          target: `≤ ${TARGET_P99_MS} ms`,
          verdict: verdict(many.p99 <= TARGET_P99_MS),
        },
        {
          id: 'B5',
          metric: `tools.changed delivery p50, ${SUBSCRIBERS} subscribers`,
          value: ms(many.p50),
          baseline: `1 subscriber ${ms(one.p50)}`,
          ratio: ratio(many.p50, one.p50),
          target: '—',
          verdict: 'report',
        },
        {
          id: 'B5',
          metric: `add_tool call → last of ${SUBSCRIBERS} subscribers has the event, p50`,
          value: ms(triggerMany.p50),
          baseline: `1 subscriber ${ms(triggerOne.p50)}`,
          ratio: ratio(triggerMany.p50, triggerOne.p50),
          target: '—',
          verdict: 'report',
        },
      ];
      return {
        rows,
        data: {
          subscribers: SUBSCRIBERS,
          events: EVENTS,
          deliveryMs: { one: round(one), many: round(many) },
          triggerToLastMs: { one: round(triggerOne), many: round(triggerMany) },
        },
      };
    } finally {
      for (const s of subscribers) s.ws.terminate();
      http?.close();
      const stopped = await serve.stop();
      if (stopped.orphans > 0) ctx.log(`  warning: ${stopped.orphans} child process(es) outlived the daemon`);
    }
  },
};

function round(summary: Summary): Record<string, number> {
  return Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, Math.round(v * 1000) / 1000]));
}
