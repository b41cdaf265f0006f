import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

/**
 * The read-only scenario as a program another user can run from `dir` alone. Run as `nobody`, a
 * child cannot read anything under a checkout that sits in a private directory (a clone inside a
 * `mktemp -d` folder, mode 0700): not tsx, not node_modules, not the sources. So the scenario is
 * bundled into `dir` (its sources, better-sqlite3's JavaScript, everything) and the native addon
 * is copied beside the bundle, which loads it from there.
 */

const SCENARIO_DIR = dirname(fileURLToPath(import.meta.url));
const ADDON = 'better_sqlite3.node';

/** better-sqlite3's compiled addon, wherever this checkout's node_modules has it. */
function addonPath(): string {
  const pkg = createRequire(import.meta.url).resolve('better-sqlite3/package.json');
  return join(dirname(pkg), 'build', 'Release', ADDON);
}

/**
 * better-sqlite3 finds its addon through the `bindings` package, which searches the directories
 * around the calling module; in a bundle that is the bundle's own directory, so look there only.
 */
const addonBesideBundle: Plugin = {
  name: 'addon-beside-bundle',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^bindings$/ }, () => ({ path: 'bindings', namespace: 'addon-beside-bundle' }));
    pluginBuild.onLoad({ filter: /.*/, namespace: 'addon-beside-bundle' }, () => ({
      contents: "module.exports = (name) => require(require('node:path').join(__dirname, name));",
      loader: 'js',
    }));
  },
};

/** Writes `<dir>/read-only-scenario.cjs` (+ the addon) and returns the bundle's path. */
export async function bundleReadOnlyScenario(dir: string): Promise<string> {
  const outfile = join(dir, 'read-only-scenario.cjs');
  await build({
    stdin: {
      // `node read-only-scenario.cjs <db path>` prints the outcome as JSON.
      contents: [
        "import { runReadOnlyScenario } from './read-only-scenario.js';",
        'const path = process.argv[2];',
        "if (!path) throw new Error('usage: read-only-scenario.cjs <db path>');",
        'runReadOnlyScenario(path).then((outcome) => process.stdout.write(JSON.stringify(outcome)));',
      ].join('\n'),
      resolveDir: SCENARIO_DIR,
      sourcefile: 'read-only-child-entry.ts',
      loader: 'ts',
    },
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
    plugins: [addonBesideBundle],
  });
  copyFileSync(addonPath(), join(dir, ADDON));
  return outfile;
}
