/**
 * How tool search reads text (issue #37 item 2): identifiers split into words, words folded so
 * a query's form rarely matters, and the words that carry no meaning for finding a tool dropped —
 * function words, and the imperative wrapping of a task ("help me", "I want to", "could you").
 * The same folding is applied to documents and queries, so they meet on the same terms.
 */

/** Function words: dropped from documents and queries alike. */
const STOP_WORDS = new Set(
  'a an and are as at be by can do for from get i in into is it its me my of on or please some that the their this to use using want we with you your'.split(' '),
);

/**
 * The phrasing around a task, not the task: dropped from queries only (a tool may well be about
 * "help"), so "I'd like you to help me shelve my changes" searches for "shelve changes".
 */
const TASK_NOISE = new Set(
  'let need needs would like could should help just go ahead try able our us there here which what how whether ok okay hey hi thanks thank so then now also'.split(' '),
);

/**
 * Words of a name or a sentence: split on anything not a letter or digit, and at camelCase and
 * letter/digit boundaries (`readFile` → `read File`, `HTTPServer` → `HTTP Server`, `getV2Users`
 * → `get V2 Users`); snake_case and kebab-case fall apart at their separators.
 */
export function tokenize(text: string): string[] {
  return text
    .replace(/([\p{Ll}\d])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/** Lower case, stop words out, and plurals and common endings folded so "files" finds "file". */
export function processTerm(term: string): string | null {
  const word = term.toLowerCase();
  if (STOP_WORDS.has(word)) return null;
  return stem(word);
}

/** A query's terms: `processTerm`, and the task's phrasing left out. */
export function queryTerms(query: string): string[] {
  const terms: string[] = [];
  // Contractions lose their tail first: "I'd", "let's" → "I", "let".
  for (const token of tokenize(query.replace(/['’](?:d|m|s|ll|re|ve)\b/giu, ''))) {
    if (TASK_NOISE.has(token.toLowerCase())) continue;
    const term = processTerm(token);
    if (term !== null) terms.push(term);
  }
  return terms;
}

/** Words seen → their terms: documents repeat their words a lot, and folding one costs a few regexes. */
const folded = new Map<string, string | null>();
const MAX_FOLDED = 50_000;

/** A document's terms, in order (repeats kept: they are the term frequencies). */
export function documentTerms(text: string): string[] {
  const terms: string[] = [];
  for (const token of tokenize(text)) {
    let term = folded.get(token);
    if (term === undefined) {
      term = processTerm(token);
      if (folded.size >= MAX_FOLDED) folded.clear();
      folded.set(token, term);
    }
    if (term !== null) terms.push(term);
  }
  return terms;
}

/** A light suffix folding (not a full stemmer): enough that a query's word form rarely matters. */
function stem(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (/(?:ss|us|is)$/.test(word)) return word;
  if (/(?:sses|xes|ches|shes|zes)$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}
