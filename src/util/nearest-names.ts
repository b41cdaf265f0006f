import { distance } from 'fastest-levenshtein';

/** A name that can be suggested, with the shorter name a person may type instead (a tool's own name). */
export interface NameCandidate {
  name: string;
  /** The tool's name on its server (`echo` for `mcp_everything_echo`). */
  shortName?: string;
}

/** How many suggestions an answer carries at most. @default 3 */
export const MAX_SUGGESTIONS = 3;

/**
 * The candidates closest to a name that matched nothing, best first, for "did you mean …?".
 * Edit distance alone misses the commonest slip — the tool's own name typed without the
 * `mcp_<server>_` prefix (`echo` is 15 edits from `mcp_everything_echo`) — so a match of the
 * short name, then a name containing what was typed, rank before near spellings. A name too far
 * from everything suggests nothing: a wrong guess is worse than none.
 */
export function nearestNames(wanted: string, candidates: Iterable<NameCandidate>, limit = MAX_SUGGESTIONS): string[] {
  const typed = wanted.trim().toLowerCase();
  if (typed === '') return [];
  const scored: Array<{ name: string; score: number }> = [];
  for (const candidate of candidates) {
    const score = scoreOf(typed, candidate);
    if (score !== undefined) scored.push({ name: candidate.name, score });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  // A tool whose own name is exactly what was typed is what was meant; names that merely contain
  // it (every tool of a server named `echo` contains "echo") would only blur that.
  const best = scored[0]?.score === 0 ? scored.filter((s) => s.score === 0) : scored;
  return [...new Set(best.map((s) => s.name))].slice(0, limit);
}

function scoreOf(typed: string, candidate: NameCandidate): number | undefined {
  const name = candidate.name.toLowerCase();
  const short = candidate.shortName?.toLowerCase();
  if (name === typed) return undefined;
  if (short === typed || name.endsWith(`_${typed}`)) return 0;
  if (typed.length >= 3 && name.includes(typed)) return 1;
  let nearest = Infinity;
  for (const against of short === undefined ? [name] : [name, short]) {
    const d = distance(typed, against);
    if (d <= tolerance(typed, against)) nearest = Math.min(nearest, d);
  }
  return nearest === Infinity ? undefined : 1 + nearest;
}

/**
 * About one slip per three characters, counted on what differs: a shared `mcp_<server>_` prefix
 * costs no edits, so it must not buy `mcp_rich_nothing` the slack to reach `mcp_rich_touch`.
 * Two at least from four characters on, since swapped letters (`ecoh`) count as two edits.
 */
function tolerance(typed: string, against: string): number {
  let common = 0;
  while (common < typed.length && typed[common] === against[common]) common += 1;
  return Math.max(typed.length >= 4 ? 2 : 1, Math.ceil((typed.length - common) / 3));
}
