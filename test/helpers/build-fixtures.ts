import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundleCli } from '../../scripts/bundle.mjs';

export const FIXTURE_SOURCE_DIR = fileURLToPath(new URL('../fixtures/servers/', import.meta.url));
export const FIXTURE_BUILD_DIR = fileURLToPath(new URL('../fixtures/.build/', import.meta.url));
/** The CLI bundled as `npm start` bundles it, for tests that spawn `switchboard` as a real process. */
export const CLI_BUNDLE = join(FIXTURE_BUILD_DIR, 'cli', 'cli.js');
/** esbuild's metafile of that bundle: which modules landed in which chunk. */
export const CLI_METAFILE = join(FIXTURE_BUILD_DIR, 'cli', 'meta.json');
const REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/**
 * Bundles every fixture server into one self-contained .mjs file. A tsx-run fixture loads the
 * compiler and spawns an esbuild helper on every start (1.5–5 s on a busy 2-core box); a bundle
 * starts in a few hundred ms, which keeps the suite fast and the benchmarks honest.
 */
export async function buildFixtures(): Promise<void> {
  const entryPoints = readdirSync(FIXTURE_SOURCE_DIR)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(FIXTURE_SOURCE_DIR, file));
  await build({
    entryPoints,
    outdir: FIXTURE_BUILD_DIR,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    // Bundled CommonJS dependencies call require(); give the ESM bundle one.
    banner: { js: REQUIRE_BANNER },
  });
  const meta = await bundleCli({ outdir: join(FIXTURE_BUILD_DIR, 'cli') });
  writeFileSync(CLI_METAFILE, JSON.stringify(meta));
}
