import { describe, expect, it } from 'vitest';
import { clusterTraffic, TrafficSampler, type TrafficTotals } from '../../../src/cluster/replica-traffic.js';
import { ManualClock } from '../../helpers/manual-clock.js';

/** Issue #43 item 6: the rates a heartbeat carries, and the cluster's sum over live replicas. */

describe('TrafficSampler', () => {
  it('turns counters into rates over the time since the previous beat', () => {
    const clock = new ManualClock();
    const totals: TrafficTotals = { calls: 0, errors: 0, inFlight: 0, limits: [] };
    const sampler = new TrafficSampler(
      () => totals,
      () => clock.now(),
    );
    clock.advance(2000);
    Object.assign(totals, { calls: 10, errors: 1, inFlight: 3 });
    expect(sampler.sample()).toEqual({ callsPerSecond: 5, errorsPerSecond: 0.5, calls: 10, errors: 1, inFlight: 3, limits: [] });
    clock.advance(4000);
    totals.calls = 12;
    expect(sampler.sample()).toMatchObject({ callsPerSecond: 0.5, errorsPerSecond: 0, calls: 12, errors: 1 });
    // Two beats at the same instant: no division by zero.
    expect(sampler.sample()).toMatchObject({ callsPerSecond: 0, errorsPerSecond: 0 });
  });
});

describe('clusterTraffic', () => {
  it('sums the live replicas only, and counts every row', () => {
    const traffic = (callsPerSecond: number, inFlight: number) => ({ callsPerSecond, errorsPerSecond: 0.1, calls: 0, errors: 0, inFlight, limits: [] });
    expect(
      clusterTraffic([
        { live: true, traffic: traffic(1.25, 2) },
        { live: true, traffic: traffic(2.5, 1) },
        { live: false, traffic: traffic(100, 50) },
        { live: true, traffic: null },
      ]),
    ).toEqual({ replicas: 4, live: 3, callsPerSecond: 3.75, errorsPerSecond: 0.2, inFlight: 3 });
  });
});
