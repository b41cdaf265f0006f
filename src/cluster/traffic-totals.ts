import { CALL_OUTCOMES, type CallMetrics, type InFlightCalls } from '../gateway/index.js';
import type { MCPManager } from '../upstream/manager.js';
import type { TrafficTotals } from './replica-traffic.js';

/** Outcomes counted as errors in the cluster view: the call failed (not a tool's own `isError` answer, not a caller's unknown name). */
const ERROR_OUTCOMES = ['error', 'shutdown'] as const;

/** A replica's counters and limits now, read from the gateway's call counters and the upstreams' gates. */
export function trafficTotals(gateway: { metrics: Pick<CallMetrics, 'count'>; calls: Pick<InFlightCalls, 'size'> }, manager: Pick<MCPManager, 'upstreams'>): TrafficTotals {
  let calls = 0;
  for (const outcome of CALL_OUTCOMES) calls += gateway.metrics.count(outcome);
  let errors = 0;
  for (const outcome of ERROR_OUTCOMES) errors += gateway.metrics.count(outcome);
  const limits = [...manager.upstreams()].map(({ name, concurrency }) => ({
    server: name,
    limit: concurrency.limit,
    mode: concurrency.mode,
    inFlight: concurrency.inFlight,
    queued: concurrency.queued,
  }));
  return { calls, errors, inFlight: gateway.calls.size, limits };
}
