/**
 * What a replica's heartbeat says of its traffic (issue #43 item 6), for the cluster view of
 * `GET /status` and the dashboard: calls and errors per second since its last beat, the calls in
 * flight now, and each server's concurrency limit in effect. `/metrics` stays per replica; this is
 * the handful of figures an operator compares across replicas at a glance.
 */

/** One server's concurrency on a replica: the limit in effect, what runs and what waits. */
export interface ServerLimit {
  server: string;
  /** Requests that may run at once, now. */
  limit: number;
  /** `adaptive` (learned from latency) or `fixed` (`maxConcurrentCalls`). */
  mode: string;
  inFlight: number;
  queued: number;
}

/** A replica's traffic, as written with each heartbeat. */
export interface ReplicaTraffic {
  /** Calls (tool calls, prompt gets, resource reads; REST and `/mcp`) finished per second over the last beat. */
  callsPerSecond: number;
  /** Of those, calls that failed (an error answer, not a tool's own `isError` result) per second. */
  errorsPerSecond: number;
  /** Calls finished since the replica started. */
  calls: number;
  /** Failed calls since the replica started. */
  errors: number;
  /** Calls in progress at the beat. */
  inFlight: number;
  limits: ServerLimit[];
}

/** The replica's counters right now, read at each beat. */
export interface TrafficTotals {
  calls: number;
  errors: number;
  inFlight: number;
  limits: ServerLimit[];
}

/**
 * Turns the counters read at each beat into rates over the time since the previous beat (since
 * the replica started, for the first).
 */
export class TrafficSampler {
  readonly #read: () => TrafficTotals;
  readonly #now: () => number;
  #last: { at: number; calls: number; errors: number };

  constructor(read: () => TrafficTotals, now: () => number = Date.now) {
    this.#read = read;
    this.#now = now;
    this.#last = { at: now(), calls: 0, errors: 0 };
  }

  sample(): ReplicaTraffic {
    const totals = this.#read();
    const at = this.#now();
    const seconds = (at - this.#last.at) / 1000;
    const rate = (n: number): number => (seconds > 0 ? round(n / seconds) : 0);
    const traffic: ReplicaTraffic = {
      callsPerSecond: rate(totals.calls - this.#last.calls),
      errorsPerSecond: rate(totals.errors - this.#last.errors),
      calls: totals.calls,
      errors: totals.errors,
      inFlight: totals.inFlight,
      limits: totals.limits,
    };
    this.#last = { at, calls: totals.calls, errors: totals.errors };
    return traffic;
  }
}

/** The cluster's sum over its live replicas (the view's first line). */
export interface ClusterTraffic {
  replicas: number;
  live: number;
  callsPerSecond: number;
  errorsPerSecond: number;
  inFlight: number;
}

export function clusterTraffic(replicas: ReadonlyArray<{ live: boolean; traffic: ReplicaTraffic | null }>): ClusterTraffic {
  const live = replicas.filter((replica) => replica.live);
  const sum = (pick: (traffic: ReplicaTraffic) => number): number => round(live.reduce((total, replica) => total + (replica.traffic ? pick(replica.traffic) : 0), 0));
  return {
    replicas: replicas.length,
    live: live.length,
    callsPerSecond: sum((t) => t.callsPerSecond),
    errorsPerSecond: sum((t) => t.errorsPerSecond),
    inFlight: sum((t) => t.inFlight),
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
