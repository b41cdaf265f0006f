import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { fixtureServerConfig } from '../test/helpers/fixtures.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { switchboardRestPath, type CallPath } from './lib/call-paths.js';
import { echoServers } from './lib/echo.js';
import { createHttpClient, expectStatus } from './lib/http.js';
import { runRounds } from './lib/load.js';
import { startServe, type ServeProcess } from './lib/serve.js';
import { ms, ratio, type Row } from './lib/table.js';

/**
 * B13 — the result guard (issue #38). Two `switchboard serve` processes, one with the guard off
 * (`maxResultTokens: 0`), one with the default (25 000), each with echo-stdio and big-results:
 *
 * 1. the guard's cost on a small result: B1's sequential `echo` calls (one keep-alive socket),
 *    both daemons in the same rounds, the order rotating; p50 and the daemon's CPU per call;
 * 2. the tokens an agent receives for big-results' 5 MB of log lines (`POST
 *    /tools/mcp_big_log_lines/call`), counted with o200k_base over the result's text, both ways;
 * 3. the same echo calls again (3 rounds) once each daemon has answered that 5 MB result.
 */
const ROUNDS = 9;
const CALLS_PER_ROUND = 500;

interface Result {
  content?: Array<{ type: string; text?: string }>;
  truncated?: { totalTokens: number; shownTokens: number };
}

async function bigResult(serve: ServeProcess): Promise<{ tokens: number; bytes: number; estimate?: Result['truncated'] }> {
  const http = createHttpClient(await serve.listening, { connections: 1 });
  try {
    const res = expectStatus(await http.postJson('/tools/mcp_big_log_lines/call', Buffer.from('{"arguments":{}}')), 200, 'log_lines');
    const result = JSON.parse(res.body.toString('utf8')) as Result;
    const text = (result.content ?? []).map((item) => item.text ?? '').join('');
    return { tokens: countTokens(text), bytes: res.body.length, ...(result.truncated ? { estimate: result.truncated } : {}) };
  } finally {
    http.close();
  }
}

export const b13: Benchmark = {
  id: 'B13',
  title: 'result guard: tokens of a 5 MB result, cost on a small one',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const servers = { ...echoServers(), big: fixtureServerConfig('big-results') };
    const off = await startServe({ servers, config: { maxResultTokens: 0 } });
    const on = await startServe({ servers, ...(ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {}) });
    const paths: CallPath[] = [];
    try {
      paths.push(switchboardRestPath(await off.listening, off.pid, 1, 'guard off'), switchboardRestPath(await on.listening, on.pid, 1, 'guard on'));
      for (const path of paths) await path.check();
      const results = await runRounds(paths, {
        rounds: ROUNDS,
        callsPerRound: CALLS_PER_ROUND,
        warmupCalls: 2000,
        onRound: (round, so) => ctx.log(`  round ${round}/${ROUNDS}: p50 off ${ms(so.get('guard off')?.stats.p50 ?? NaN)}, on ${ms(so.get('guard on')?.stats.p50 ?? NaN)}`),
      });
      const offStats = results.get('guard off')!;
      const onStats = results.get('guard on')!;
      const before = await bigResult(off);
      const after = await bigResult(on);
      ctx.log(`  5 MB log lines: ${before.tokens} o200k tokens without the guard, ${after.tokens} with it (estimated ${JSON.stringify(after.estimate)})`);
      const later = await runRounds(paths, { rounds: 3, callsPerRound: CALLS_PER_ROUND, warmupCalls: 200 });
      const offLater = later.get('guard off')!;
      const onLater = later.get('guard on')!;
      const rows: Row[] = [
        {
          id: 'B13',
          metric: 'o200k tokens an agent receives for 5 MB of log lines',
          value: `${after.tokens}`,
          baseline: `guard off ${before.tokens}`,
          ratio: ratio(after.tokens, before.tokens),
          target: '≤ 25 000',
          verdict: after.tokens <= 25_000 ? 'met' : 'missed',
        },
        {
          id: 'B13',
          metric: 'small echo result, REST p50, guard on',
          value: ms(onStats.stats.p50!),
          baseline: `guard off ${ms(offStats.stats.p50!)}`,
          ratio: ratio(onStats.stats.p50!, offStats.stats.p50!),
          target: 'none measurable',
          verdict: 'report',
        },
        {
          id: 'B13',
          metric: 'small echo result, daemon CPU per call, guard on',
          value: ms(onStats.frontCpuPerCallMs),
          baseline: `guard off ${ms(offStats.frontCpuPerCallMs)}`,
          ratio: ratio(onStats.frontCpuPerCallMs, offStats.frontCpuPerCallMs),
          target: 'none measurable',
          verdict: 'report',
        },
        {
          id: 'B13',
          metric: 'small echo result, REST p50, after the 5 MB result, guard on',
          value: ms(onLater.stats.p50!),
          baseline: `guard off ${ms(offLater.stats.p50!)}`,
          ratio: ratio(onLater.stats.p50!, offLater.stats.p50!),
          target: '—',
          verdict: 'report',
        },
      ];
      return { rows, data: { before, after, small: { off: offStats, on: onStats }, afterBig: { off: offLater, on: onLater } } };
    } finally {
      for (const path of paths) await path.close().catch(() => undefined);
      await off.stop();
      await on.stop();
    }
  },
};
