import { performance } from 'node:perf_hooks';

/**
 * Many clients calling at once for a fixed time (B9): each client is a loop that calls, records
 * the latency, and calls again until the deadline — so the number in flight is the number of
 * clients, as with agents that each wait for their answer before the next step. Failures are
 * counted and the first few kept; a failing client carries on (the soak measures what it meets).
 */
export interface SoakClient {
  /** Which path (figure) this client's calls count towards. */
  path: string;
  call(): Promise<unknown>;
}

export interface PathOutcome {
  samples: number[];
  errors: number;
  firstErrors: string[];
}

const KEEP_ERRORS = 5;

export async function soak(clients: readonly SoakClient[], durationMs: number): Promise<Map<string, PathOutcome>> {
  const outcomes = new Map<string, PathOutcome>();
  for (const client of clients) if (!outcomes.has(client.path)) outcomes.set(client.path, { samples: [], errors: 0, firstErrors: [] });
  const deadline = performance.now() + durationMs;
  const loop = async (client: SoakClient): Promise<void> => {
    const outcome = outcomes.get(client.path) as PathOutcome;
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await client.call();
        outcome.samples.push(performance.now() - t0);
      } catch (err) {
        outcome.errors += 1;
        if (outcome.firstErrors.length < KEEP_ERRORS) outcome.firstErrors.push(err instanceof Error ? err.message : String(err));
      }
    }
  };
  await Promise.all(clients.map(loop));
  return outcomes;
}
