/** A file a build made: where it goes, its bytes, and (for a bin) its mode. */
export interface BuiltFile {
  path: string;
  contents: string | Uint8Array;
  mode?: number;
}

/** Writes each file unless it already holds those bytes, by a rename; returns the paths written. See write-changed.mjs. */
export function writeChanged(files: readonly BuiltFile[]): string[];

/** Removes the files directly in `dir` not in `keep` (absolute paths), other builds' temp files aside. */
export function removeOthers(dir: string, keep: ReadonlySet<string>): void;
