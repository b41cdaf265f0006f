// `npm start` on a fresh clone: bundles dist/cli.js (and the dashboard, dist/ui/) when it is
// missing or older than any file under src/ or ui/ (about a second, with a line saying so), so the first start needs no separate
// build step and later starts skip it. Type checking is `npm run typecheck` / `npm test`, and
// `npm run build` also emits the library and its declarations with tsc.
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

const marker = 'dist/cli.js';
// The dashboard (ui/) is built with the CLI: `npm start` serves it at /ui.
const sources = ['src', 'ui', 'package.json'];
const newest = Math.max(...sources.map((path) => (statSync(path).isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)));
if (!existsSync(marker) || !existsSync('dist/ui/app.js') || statSync(marker).mtimeMs < newest) {
  process.stderr.write(`switchboard: ${existsSync(marker) ? 'sources changed, rebuilding' : 'first start, building'} dist/cli.js with esbuild… `);
  const started = performance.now();
  // What the marker will say was built: the sources as they were when the build began.
  const builtAt = new Date();
  let bundleCli;
  let bundleUi;
  try {
    ({ bundleCli, bundleUi } = await import('./bundle.mjs'));
  } catch (err) {
    process.stderr.write(
      `\nswitchboard: cannot build: ${err instanceof Error ? err.message : String(err)}\n` +
        'esbuild is a dev dependency: run `npm ci` (not `npm ci --omit=dev`), or ship a built dist/ (see the Dockerfile).\n',
    );
    process.exit(1);
  }
  await bundleCli();
  await bundleUi();
  // The bundles rewrite only files whose bytes changed (scripts/write-changed.mjs): after an edit
  // that builds the same bytes (a comment), the marker is marked as built all the same, as of the
  // build's start, so an edit made while it ran still counts as newer.
  utimesSync(marker, builtAt, builtAt);
  process.stderr.write(`done in ${(Math.round(performance.now() - started) / 1000).toFixed(1)} s\n`);
}
