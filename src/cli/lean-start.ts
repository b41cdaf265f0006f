import { setFlagsFromString } from 'node:v8';

/**
 * Two V8 settings held while `serve` starts and given back once the daemon is ready, so that an
 * idle daemon does not keep what only its start needed (issue #44 item 3; BENCHMARKS.md, branch
 * rss). Each is V8's default again from `ready` on, so a busy daemon is as before.
 *
 * - **The young generation stays at its initial 1 MiB per semi-space.** A start evaluates ~2.5 MB
 *   of modules whose objects (functions, schemas, routes) live as long as the process, so every
 *   scavenge of the start promotes most of what it sees and V8 doubles the young generation up to
 *   8 MiB per semi-space. Empty after the start, it stayed committed: an idle daemon never
 *   collects again, and V8 gives the space back only at a collection made while allocation is
 *   slow. That was ~4.7 MiB of an idle daemon's resident set.
 * - **No optimising compiler (`--no-turbofan`: the interpreter and the baseline compiler only).**
 *   What a start runs hot (module evaluation, schema construction, the config parse) runs once;
 *   TurboFan compiled it on background threads, and its code pages in node's binary, its zones
 *   and the optimised code stayed resident: ~5 MiB of an idle daemon. From `ready` on, what runs
 *   hot is optimised as before, functions that ran hot during the start included.
 *   (`--max-opt=1` would do the same but implies `--no-turbofan`, which raising it back does not
 *   undo: nothing would ever be optimised again.)
 *
 * Either is left alone when the operator chose it (`node --max-semi-space-size=…`,
 * `--no-turbofan`, `--no-opt`, `--max-opt=…`, `--jitless`, or the same in `NODE_OPTIONS`).
 */
const SETTINGS = [
  // V8's default growth factor is 2: the young generation doubles while more survives than it holds.
  { chosen: /--(?:max[-_]|min[-_])?semi[-_]space/, hold: '--semi-space-growth-factor=1', release: '--semi-space-growth-factor=2' },
  // TurboFan is on by default (`--opt` is its alias).
  { chosen: /--(?:no[-_])?(?:turbofan|opt)\b|--max[-_]opt|--jitless/, hold: '--no-turbofan', release: '--turbofan' },
] as const;

type Setting = (typeof SETTINGS)[number];

let held: Setting[] = [];

/** The settings node's own flags (`execArgv`, `NODE_OPTIONS`) leave to `holdLeanStart`, as the flags it sets. */
export function leanStartSettings(execArgv: readonly string[], nodeOptions: string): Setting[] {
  const chosen = [...execArgv, nodeOptions].join(' ');
  return SETTINGS.filter((setting) => !setting.chosen.test(chosen));
}

/** Holds the settings (before the daemon's modules are evaluated). Idempotent. */
export function holdLeanStart(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): void {
  if (held.length > 0) return;
  held = leanStartSettings(execArgv, nodeOptions);
  for (const setting of held) setFlagsFromString(setting.hold);
}

/** Gives every held setting back to V8's default; a no-op unless held. Idempotent. */
export function releaseLeanStart(): void {
  for (const setting of held) setFlagsFromString(setting.release);
  held = [];
}
