import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { bundleCli } from '../../scripts/bundle.mjs';
import { writeChanged } from '../../scripts/write-changed.mjs';

export const FIXTURE_SOURCE_DIR = fileURLToPath(new URL('../fixtures/servers/', import.meta.url));
export const FIXTURE_BUILD_DIR = fileURLToPath(new URL('../fixtures/.build/', import.meta.url));
/** The packages every fixture shares (fixtures/packages/entry.ts) and their code-cache loader. */
const PACKAGES_SOURCE_DIR = fileURLToPath(new URL('../fixtures/packages/', import.meta.url));
/** The CLI bundled as `npm start` bundles it, for tests that spawn `switchboard` as a real process. */
export const CLI_BUNDLE = join(FIXTURE_BUILD_DIR, 'cli', 'cli.js');
/** esbuild's metafile of that bundle: which modules landed in which chunk. */
export const CLI_METAFILE = join(FIXTURE_BUILD_DIR, 'cli', 'meta.json');
const REQUIRE_BANNER = "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/**
 * What every fixture script is built for: one file each, run by the Node the tests run on. Written
 * only where the bytes changed (scripts/write-changed.mjs), so a second test run in this checkout
 * leaves the first one's fixtures, mid-start, their files.
 */
const FOR_NODE = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning', write: false } as const;

/** The packages a fixture takes from the shared, code-cached script instead of bundling its own. */
const SHARED_PACKAGES = /^(@modelcontextprotocol\/(server|server\/stdio|node|server-legacy\/sse)|zod)$/;

/** Resolves each shared package to a line that takes it from `.build/packages.cjs` at run time. */
const sharedPackages: Plugin = {
  name: 'shared-packages',
  setup(build) {
    build.onResolve({ filter: SHARED_PACKAGES }, (args) => ({ path: args.path, namespace: 'shared-package' }));
    build.onResolve({ filter: /^\.\/packages\.cjs$/, namespace: 'shared-package' }, (args) => ({ path: args.path, external: true }));
    build.onLoad({ filter: /.*/, namespace: 'shared-package' }, (args) => ({
      contents: `module.exports = require('./packages.cjs').packages[${JSON.stringify(args.path)}];`,
      loader: 'js',
    }));
  },
};

/**
 * Bundles every fixture server into one small .mjs file, and the packages they share (the SDK,
 * zod) into one script that each fixture loads through V8's code cache. A tsx-run fixture loads the
 * compiler and spawns an esbuild helper on every start (1.5–5 s on a busy 2-core box); a bundle
 * starts in a few hundred ms, and compiling the shared packages once instead of on every one of
 * the suite's hundreds of fixture starts takes a fifth off each.
 */
export async function buildFixtures(): Promise<void> {
  const entryPoints = readdirSync(FIXTURE_SOURCE_DIR)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(FIXTURE_SOURCE_DIR, file));
  mkdirSync(FIXTURE_BUILD_DIR, { recursive: true });
  // All three at once: the CLI bundle took as long as the other two together, after them (~1–2 s
  // of the run's start, before any test file can begin).
  const [fixtures, , meta] = await Promise.all([
    build({
      entryPoints,
      outdir: FIXTURE_BUILD_DIR,
      outExtension: { '.js': '.mjs' },
      ...FOR_NODE,
      format: 'esm',
      // Bundled CommonJS dependencies (the shared packages' line among them) call require(); give the ESM bundle one.
      banner: { js: REQUIRE_BANNER },
      plugins: [sharedPackages],
    }),
    buildSharedPackages(),
    bundleCli({ outdir: join(FIXTURE_BUILD_DIR, 'cli') }),
  ]);
  writeChanged([...fixtures.outputFiles, { path: CLI_METAFILE, contents: JSON.stringify(meta) }]);
}

/**
 * `.build/packages-lib.js`: a script that evaluates to a function of `require` returning the
 * packages (see fixtures/packages/entry.ts); `.build/packages.cjs` loads it with the code cache,
 * which is made here by a process that starts every package, so the functions a start runs are
 * in it too.
 */
async function buildSharedPackages(): Promise<void> {
  const lib = join(FIXTURE_BUILD_DIR, 'packages-lib.js');
  const libBuild = await build({
    entryPoints: [join(PACKAGES_SOURCE_DIR, 'entry.ts')],
    outfile: lib,
    ...FOR_NODE,
    format: 'cjs',
    minifyWhitespace: true,
    minifySyntax: true,
    banner: { js: '(function (require) { const module = { exports: {} }; const exports = module.exports;' },
    footer: { js: 'return module.exports.packages; })' },
  });
  const loader = join(FIXTURE_BUILD_DIR, 'packages.cjs');
  const loaderBuild = await build({
    entryPoints: [join(PACKAGES_SOURCE_DIR, 'loader.ts')],
    outfile: loader,
    ...FOR_NODE,
    format: 'cjs',
  });
  const cache = join(FIXTURE_BUILD_DIR, 'packages-lib.cache');
  const changed = writeChanged([...libBuild.outputFiles, ...loaderBuild.outputFiles]);
  // The same lib as the run before: its cache is still the one to use (one V8 refuses is written
  // again by the first fixture that finds it so; see fixtures/packages/loader.ts).
  if (changed.length === 0 && existsSync(cache)) return;
  // V8 checks a cache against its script's length, not its text: a changed lib of the same length
  // would take the old one's code. Made anew below.
  rmSync(cache, { force: true });
  const warm = `const l = require(${JSON.stringify(loader)}); for (const name of Object.keys(l.packages)) void l.packages[name]; l.writeCache();`;
  // Not execFileSync: the other bundles' results are handled on this thread meanwhile.
  const warming = spawn(process.execPath, ['-e', warm], { stdio: 'inherit' });
  const [code, signal] = (await once(warming, 'exit')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) throw new Error(`warming the fixtures' code cache failed (${signal ?? `exit code ${code}`})`);
}
