import { setFlagsFromString } from 'node:v8';

/**
 * V8's default: the young generation (where new objects are allocated) doubles, up to 8 MiB per
 * semi-space, each time more survives its collections than it holds.
 */
const DEFAULT_GROWTH_FACTOR = 2;

let held = false;

/**
 * Keeps the young generation at its initial 1 MiB per semi-space while the daemon starts.
 *
 * A start evaluates ~2.5 MB of modules whose objects (functions, schemas, routes) all live for
 * the life of the process, so every scavenge of the start promotes most of what it sees and V8
 * grows the young generation to its 8 MiB maximum. Once the start is over that space is empty,
 * but it stays committed: an idle daemon never collects again, and V8 gives the space back only
 * at a collection made while allocation is slow. That was ~6.6 MiB of an idle daemon's resident
 * set (issue #44 item 3). Growth is allowed again once the daemon is ready
 * (`releaseYoungGeneration`), so a busy daemon's young generation grows as before and the call
 * path pays nothing; the start pays a few more scavenges (BENCHMARKS.md, branch rss).
 *
 * Leaves the heap alone when the operator set the young generation's size or growth themselves
 * (`node --max-semi-space-size=…`, `NODE_OPTIONS`). Idempotent.
 */
export function holdYoungGeneration(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): void {
  if (held || [...execArgv, nodeOptions].some((arg) => /semi[-_]space/.test(arg))) return;
  setFlagsFromString('--semi-space-growth-factor=1');
  held = true;
}

/** Lets the young generation grow again (V8's default factor); a no-op unless held. Idempotent. */
export function releaseYoungGeneration(): void {
  if (!held) return;
  setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  held = false;
}
