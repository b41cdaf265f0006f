import type { PathResult } from './lib/load.js';
import { peerLabel } from './lib/peers.js';
import type { PeerStartSample, StartSample } from './lib/startup.js';
import { median } from './lib/stats.js';
import { mib, ms, perSecond, ratio, verdict, type Row } from './lib/table.js';

/** B7's table rows: every Switchboard figure beside its peer's, as a ratio. */

export interface CallResults {
  sequential: Map<string, PathResult>;
  concurrent: Map<string, PathResult>;
}

type SwitchboardStart = Pick<StartSample, 'listeningMs' | 'readyMs' | 'allConnectedMs' | 'peakRssBytes'>;

export interface StartResults {
  cold: SwitchboardStart;
  warm: SwitchboardStart;
  hub: PeerStartSample;
  samples: { cold: StartSample[]; warm: StartSample[]; hub: PeerStartSample[] };
}

/**
 * Issue #17 item 2, in the same run: REST overhead p50 ≤ 0.3× mcp-hub's, throughput ≥ 2× mcp-hub's,
 * /mcp overhead p50 ≤ 0.5× mcp-proxy's.
 */
const TARGET = { restOverhead: 0.3, restThroughput: 2, mcpOverhead: 0.5 };

interface Pair {
  /** What is compared, e.g. "REST" or "/mcp, 2025-era session". */
  what: string;
  ours: string;
  peer: string;
  peerLabel: string;
  overheadTarget: number;
  throughputTarget?: number;
}

/** One upstream setup's calls (issue #27: the echo-stdio fixture, and server-everything). */
export interface SetupCalls {
  label: string;
  calls: CallResults;
}

export function peerRows(setups: readonly SetupCalls[], starts: StartResults, inFlight: number): Row[] {
  return [...setups.flatMap(({ label, calls }) => callRows(calls, inFlight, setups.length > 1 ? `[${label}] ` : '')), ...startRows(starts)];
}

function callRows(calls: CallResults, inFlight: number, prefix: string): Row[] {
  const hub = peerLabel('mcp-hub');
  const proxy = peerLabel('mcp-proxy');
  const pairs: Pair[] = [
    { what: 'REST', ours: 'switchboard-rest', peer: 'mcp-hub-rest', peerLabel: hub, overheadTarget: TARGET.restOverhead, throughputTarget: TARGET.restThroughput },
    { what: '/mcp, 2025-era session', ours: 'switchboard-mcp-legacy', peer: 'mcp-proxy-mcp-legacy', peerLabel: proxy, overheadTarget: TARGET.mcpOverhead },
    { what: '/mcp, 2026-07-28', ours: 'switchboard-mcp-modern', peer: 'mcp-proxy-mcp-modern', peerLabel: proxy, overheadTarget: TARGET.mcpOverhead },
  ];
  const seq = (id: string): PathResult => get(calls.sequential, id);
  const conc = (id: string): PathResult => get(calls.concurrent, id);
  const direct = { seq: seq('direct'), conc: conc('direct') };
  const directP50 = direct.seq.stats.p50;

  const rows: Row[] = [
    {
      id: 'B7',
      metric: `${prefix}floor: direct SDK stdio client, echo p50 / p99 sequential; calls/s ${inFlight} in flight`,
      value: `${pair(direct.seq.stats.p50, direct.seq.stats.p99)}; ${perSecond(direct.conc.stats.callsPerSecond)}`,
      baseline: '—',
      ratio: '—',
      target: '—',
      verdict: 'report',
    },
  ];
  for (const p of pairs) {
    const [ours, theirs] = [seq(p.ours), seq(p.peer)];
    const [oursConc, theirsConc] = [conc(p.ours), conc(p.peer)];
    const oursOverhead = ours.stats.p50 - directP50;
    const theirOverhead = theirs.stats.p50 - directP50;
    const throughput = oursConc.stats.callsPerSecond / theirsConc.stats.callsPerSecond;
    rows.push(
      {
        id: 'B7',
        metric: `${prefix}${p.what}: echo p50 / p99, sequential`,
        value: pair(ours.stats.p50, ours.stats.p99),
        baseline: `${p.peerLabel} ${pair(theirs.stats.p50, theirs.stats.p99)}`,
        ratio: `${ratio(ours.stats.p50, theirs.stats.p50)} / ${ratio(ours.stats.p99, theirs.stats.p99)}`,
        target: '—',
        verdict: 'report',
      },
      {
        id: 'B7',
        metric: `${prefix}${p.what}: overhead p50 (p50 − direct ${ms(directP50)})`,
        value: signed(oursOverhead),
        baseline: `${p.peerLabel} ${signed(theirOverhead)}`,
        ratio: ratio(oursOverhead, theirOverhead),
        target: `≤ ${p.overheadTarget}× ${p.peerLabel.split(' ')[0]}'s`,
        verdict: verdict(oursOverhead <= p.overheadTarget * theirOverhead),
      },
      {
        id: 'B7',
        metric: `${prefix}${p.what}: calls/s, ${inFlight} in flight (p50 / p99)`,
        value: `${perSecond(oursConc.stats.callsPerSecond)} (${pair(oursConc.stats.p50, oursConc.stats.p99)})`,
        baseline: `${p.peerLabel} ${perSecond(theirsConc.stats.callsPerSecond)} (${pair(theirsConc.stats.p50, theirsConc.stats.p99)})`,
        ratio: ratio(oursConc.stats.callsPerSecond, theirsConc.stats.callsPerSecond),
        target: p.throughputTarget === undefined ? '—' : `≥ ${p.throughputTarget}× ${p.peerLabel.split(' ')[0]}'s`,
        verdict: p.throughputTarget === undefined ? 'report' : verdict(throughput >= p.throughputTarget),
      },
      {
        id: 'B7',
        metric: `${prefix}${p.what}: front process CPU per call, sequential / ${inFlight} in flight`,
        value: pair(ours.frontCpuPerCallMs, oursConc.frontCpuPerCallMs),
        baseline: `${p.peerLabel} ${pair(theirs.frontCpuPerCallMs, theirsConc.frontCpuPerCallMs)}`,
        ratio: `${ratio(ours.frontCpuPerCallMs, theirs.frontCpuPerCallMs)} / ${ratio(oursConc.frontCpuPerCallMs, theirsConc.frontCpuPerCallMs)}`,
        target: '—',
        verdict: 'report',
      },
    );
  }

  return rows;
}

function startRows(starts: StartResults): Row[] {
  const hub = peerLabel('mcp-hub');
  const hubReady = `${hub} ready ${ms(starts.hub.readyMs)}`;
  const listening = median([...starts.samples.cold, ...starts.samples.warm].map((sample) => sample.listeningMs));
  return [
    {
      id: 'B7',
      metric: 'start → listening (node + module load)',
      value: ms(listening),
      baseline: `${hub} ${ms(starts.hub.listeningMs)}`,
      ratio: ratio(listening, starts.hub.listeningMs),
      target: '—',
      verdict: 'report',
    },
    ...(['cold', 'warm'] as const).flatMap((phase): Row[] => [
      {
        id: 'B7',
        metric: `3 servers, ${phase} cache: start → /ready 200`,
        value: ms(starts[phase].readyMs),
        baseline: hubReady,
        ratio: ratio(starts[phase].readyMs, starts.hub.readyMs),
        target: '—',
        verdict: 'report',
      },
      {
        id: 'B7',
        metric: `3 servers, ${phase} cache: start → all 3 connected`,
        value: ms(starts[phase].allConnectedMs),
        baseline: hubReady,
        ratio: ratio(starts[phase].allConnectedMs, starts.hub.readyMs),
        target: '—',
        verdict: 'report',
      },
    ]),
    {
      id: 'B7',
      metric: '3 servers: front peak RSS (VmHWM), cold / warm',
      value: `${mib(starts.cold.peakRssBytes)} / ${mib(starts.warm.peakRssBytes)}`,
      baseline: `${hub} ${mib(starts.hub.peakRssBytes)}`,
      ratio: `${ratio(starts.cold.peakRssBytes, starts.hub.peakRssBytes)} / ${ratio(starts.warm.peakRssBytes, starts.hub.peakRssBytes)}`,
      target: '—',
      verdict: 'report',
    },
  ];
}

function get(results: Map<string, PathResult>, id: string): PathResult {
  const result = results.get(id);
  if (!result) throw new Error(`no result for path ${id}`);
  return result;
}

/** "0.321 / 2.47 ms" */
function pair(a: number, b: number): string {
  const [first, second] = [ms(a), ms(b)];
  return `${first.replace(/ ms$/, '')} / ${second}`;
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${ms(value)}`;
}
