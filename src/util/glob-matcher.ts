import picomatch from 'picomatch';

/**
 * Name globs of the config (`requireApproval`, and the agents' globs of issue #22), matched with
 * picomatch. Names are not paths, so `*` also crosses `/`. Unbalanced brackets, braces and
 * parentheses are errors, not literal characters: a typo in a safety list must not silently
 * match nothing.
 */
const OPTIONS: picomatch.PicomatchOptions = { strictBrackets: true, dot: true, bash: true };

/** Why `glob` is not a usable glob, or undefined when it is. */
export function globProblem(glob: string): string | undefined {
  try {
    // picomatch answers some patterns it cannot turn into a regular expression with one that never matches.
    if (picomatch.makeRe(glob, OPTIONS).source === '$^') return 'it can never match';
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** One matcher for a list of globs: true when any matches. Compiled once per list object. */
export function globMatcher(globs: readonly string[]): (name: string) => boolean {
  let matcher = compiled.get(globs);
  if (!matcher) {
    matcher = globs.length === 0 ? () => false : compile(globs);
    compiled.set(globs, matcher);
  }
  return matcher;
}

const compiled = new WeakMap<readonly string[], (name: string) => boolean>();

/** A list that does not compile (the config is validated, so only by mistake) matches every name: a safety list fails closed. */
function compile(globs: readonly string[]): (name: string) => boolean {
  try {
    return picomatch([...globs], OPTIONS);
  } catch {
    return () => true;
  }
}
