import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const FIXTURE_SOURCE_DIR = fileURLToPath(new URL('../fixtures/servers/', import.meta.url));
export const FIXTURE_BUILD_DIR = fileURLToPath(new URL('../fixtures/.build/', import.meta.url));
/** The CLI bundled for tests that spawn `switchboard serve` as a real process. */
export const CLI_BUNDLE = join(FIXTURE_BUILD_DIR, 'switchboard-cli.mjs');
const CLI_SOURCE = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
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
  // The daemon keeps its dependencies external: better-sqlite3 is a native addon.
  await build({
    entryPoints: [CLI_SOURCE],
    outfile: CLI_BUNDLE,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
}
