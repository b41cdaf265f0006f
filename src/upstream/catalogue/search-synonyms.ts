/**
 * Abbreviations and their long forms: a person asks an agent about "PR 12" or "the db", a tool
 * describes "pull request" and "database". Each query word is widened with the other entries of
 * its groups, which count less than the word itself (`SYNONYM_WEIGHT` in tool-search.ts).
 *
 * Kept to abbreviations and a few exact equivalents on purpose. A broad thesaurus (about 120 groups: "folder" for
 * "directory", "remember" for "memory", …) written while reading the query set's misses raised
 * its recall@5 from 0.72 to 0.84 and lowered it on the held-out set written afterwards (0.60 →
 * 0.59): it learnt the test, not the language. This table moves the held-out set not at all and
 * the query set by one point; see BENCHMARKS.md B10.
 *
 * One line a group; a line with `|` lists phrases ("pull request" stands for its words together).
 */
const GROUPS = `
pull request|pr
merge request|mr
repository repo
directory folder dir
database db
javascript js
environment env
kubernetes k8s kube
configuration config
message msg
image picture photo img
document doc
`;

/** Query word (processed as the index processes words) → the words it also stands for. */
export type SynonymTable = ReadonlyMap<string, readonly string[]>;

/**
 * Builds the table with `processTerm` (the index's own word folding) so a query word and its
 * synonyms meet the index's terms exactly. A phrase ("pull request") expands to all its words.
 */
export function buildSynonyms(processTerm: (term: string) => string | null): SynonymTable {
  const table = new Map<string, Set<string>>();
  for (const line of GROUPS.split('\n')) {
    if (line.trim() === '') continue;
    // A line with `|` lists phrases; otherwise every word is its own entry.
    const entries = line.includes('|') ? line.split('|') : line.trim().split(/\s+/);
    const folded = entries.map((entry) =>
      entry
        .trim()
        .split(/\s+/)
        .map(processTerm)
        .filter((word): word is string => word !== null),
    );
    for (const [i, words] of folded.entries()) {
      // Only a one-word entry is a key: a query is split into words before it is widened.
      if (words.length !== 1) continue;
      const key = words[0] as string;
      const others = table.get(key) ?? new Set<string>();
      for (const [j, other] of folded.entries()) if (j !== i) for (const word of other) if (word !== key) others.add(word);
      table.set(key, others);
    }
  }
  return new Map([...table].map(([key, words]) => [key, [...words]]));
}
