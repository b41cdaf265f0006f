/** One server's concurrency as `GET /servers/:name` shows it (issue #35), for a benchmark's log and data. */
export interface TrafficNote {
  limit: number;
  mode: string;
  reason: string;
  queueBound: number;
  queueMode: string;
  serviceMs: number | null;
}

/** Reads it once, after a benchmark's timed rounds: one request, outside any timing. */
export async function trafficOf(url: string, server = 'echo'): Promise<TrafficNote> {
  const res = await fetch(`${url}/servers/${encodeURIComponent(server)}`);
  if (!res.ok) throw new Error(`GET /servers/${server}: HTTP ${res.status}`);
  const { traffic } = (await res.json()) as { traffic: TrafficNote };
  return { limit: traffic.limit, mode: traffic.mode, reason: traffic.reason, queueBound: traffic.queueBound, queueMode: traffic.queueMode, serviceMs: traffic.serviceMs };
}

export const describeTraffic = (t: TrafficNote): string =>
  `limit ${t.limit} (${t.mode}: ${t.reason}); queue ${t.queueMode}, bound ${t.queueBound}; service ${t.serviceMs ?? '?'} ms`;
