// Writes a build's outputs so that a build running beside a reader never hands it half a file or
// none. Two `npm test` runs in one checkout (an editor's watcher and a terminal, say) both build
// the CLI, the fixtures and the dashboard at their start: the second used to delete and rewrite
// every file while the first one's daemons and fixtures were loading them. Now a file whose bytes
// are the same is not touched at all (the same tree builds the same bytes), and a changed one is
// written beside its target and renamed over it: whoever opens it gets the old file or the new one.
import { Buffer } from 'node:buffer';
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let temps = 0;
/** The name `writeChanged` gives a file before it is renamed over its target. */
const TEMP = /\.\d+-\d+\.tmp$/;

/**
 * Writes each of `files` (`{ path, contents, mode? }`, contents a string or bytes) unless the file
 * there already holds exactly those bytes. Returns the paths it wrote.
 */
export function writeChanged(files) {
  const written = [];
  for (const { path, contents, mode } of files) {
    const bytes = typeof contents === 'string' ? Buffer.from(contents) : Buffer.from(contents.buffer, contents.byteOffset, contents.byteLength);
    if (sameBytes(path, bytes)) continue;
    const temp = `${path}.${process.pid}-${++temps}.tmp`;
    writeFileSync(temp, bytes, mode === undefined ? undefined : { mode });
    renameSync(temp, path);
    written.push(path);
  }
  return written;
}

/** A temp file this old is a crashed build's, not one between its write and its rename. */
const STALE_TEMP_MS = 10 * 60_000;

/**
 * Removes the files directly in `dir` that are not in `keep` (absolute paths): an older build's
 * leftovers. Another build's temp file, between its write and its rename, is left alone. When
 * `keep` names nothing in `dir`, nothing is removed: paths spelt otherwise than `dir` would
 * otherwise take the new build's files too.
 */
export function removeOthers(dir, keep) {
  if (![...keep].some((path) => dirname(path) === dir)) return;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (!entry.isFile() || keep.has(path)) continue;
    if (!TEMP.test(entry.name) || isOlderThan(path, STALE_TEMP_MS)) rmSync(path, { force: true });
  }
}

function isOlderThan(path, ms) {
  try {
    return statSync(path).mtimeMs < Date.now() - ms;
  } catch {
    return false;
  }
}

function sameBytes(path, bytes) {
  try {
    return readFileSync(path).equals(bytes);
  } catch {
    return false;
  }
}
