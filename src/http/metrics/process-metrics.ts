import type { Registry } from 'prom-client';

/**
 * Process metrics under the names every Node.js dashboard and alert rule already knows
 * (`process_cpu_seconds_total`, `process_resident_memory_bytes`, `nodejs_eventloop_lag_seconds`,
 * heap, GC, handles…): prom-client's default collectors, rather than our own look-alikes. They
 * describe the process, not one daemon, so there is one registry per process. prom-client is
 * loaded by the first scrape, not at start: a daemon nobody scrapes never compiles it, and the
 * only thing lost is the GC and event-loop-delay history from before that scrape.
 */
let registry: Promise<Registry> | undefined;

/** Starts collecting (once per process); the event-loop and GC collectors measure from here on. */
function startProcessMetrics(): Promise<Registry> {
  registry ??= import('prom-client').then((mod) => {
    // A CommonJS package: in the CLI bundle its exports arrive as `default` only.
    const { Registry, collectDefaultMetrics } = (mod.default as typeof mod | undefined) ?? mod;
    const own = new Registry();
    collectDefaultMetrics({ register: own });
    return own;
  });
  return registry;
}

/**
 * The process metrics in Prometheus text format, with a trailing newline. prom-client puts a blank
 * line between families; the format allows it, but the rest of `/metrics` has none, so neither does this.
 */
export async function processMetricsText(): Promise<string> {
  return (await (await startProcessMetrics()).metrics()).replace(/\n{2,}/g, '\n');
}
