import { execFile } from 'node:child_process';
import { accessSync, constants, cpSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FIXTURE_BUILD_DIR } from '../helpers/build-fixtures.js';
import { tempDir } from '../helpers/process.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url);
const PACKAGE = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
  files: string[];
  scripts: Record<string, string>;
};

/**
 * Issue #25, item 2: `switchboard` on PATH from any folder. The package is packed with `npm pack`
 * (its `files` and `bin` as they are) and installed globally into a temp prefix the way
 * `npm install -g .` does from a clone, then its bin runs from another folder.
 *
 * The package's dist/ is the CLI bundle the test setup builds with the same `bundleCli` that
 * `npm run build` runs (tsc's library output is not what the bin needs, and compiling it here
 * would cost a minute). The install links the unpacked package rather than unpacking 100
 * dependencies into the prefix (75 MB, over a minute on a busy two-core box): the bin needs none
 * of them for `--version` and `discover` — the bundle carries its dependencies, better-sqlite3
 * aside — so what is tested is the package's own part: its files, bin, shebang and bundle.
 */

/** npm itself, on a loaded box. */
const TIMEOUT_MS = 120_000;

async function stagePackage(): Promise<string> {
  const stage = await tempDir();
  for (const file of ['package.json', 'README.md', 'openapi.yaml']) cpSync(new URL(file, ROOT), join(stage, file));
  const bundle = join(FIXTURE_BUILD_DIR, 'cli');
  // Source maps aside: the bin never reads them, and they are 11 of the bundle's 15 MB, which
  // npm pack would gzip and tar unpack for a second of CPU to no purpose here.
  const filter = (source: string): boolean => !source.endsWith('.map');
  for (const entry of readdirSync(bundle)) if (entry !== 'meta.json' && filter(entry)) cpSync(join(bundle, entry), join(stage, 'dist', entry), { recursive: true, filter });
  return stage;
}

describe('global install', () => {
  it(
    'npm pack has the bin and the bundle; installed globally, `switchboard --version` works from any folder',
    async () => {
      expect(PACKAGE.bin).toEqual({ switchboard: 'dist/cli.js' });
      // A fresh clone has no dist/: packing builds it first.
      expect(PACKAGE.scripts.prepack).toBe('npm run build');

      const stage = await stagePackage();
      const out = await tempDir();
      const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], { cwd: stage });
      const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string; mode: number }> }>;
      const paths = packed!.files.map((f) => f.path);
      expect(paths).toEqual(expect.arrayContaining(['package.json', 'README.md', 'openapi.yaml', 'dist/cli.js', 'dist/watchdog.js']));
      expect(paths.some((p) => /^dist\/chunks\/.+\.js$/.test(p))).toBe(true);
      expect(paths.filter((p) => !p.startsWith('dist/') && !['package.json', 'README.md', 'openapi.yaml'].includes(p))).toEqual([]);
      // Executable in the tarball too, so ./dist/cli.js runs in an unpacked copy without npm's link.
      expect(packed!.files.find((f) => f.path === 'dist/cli.js')!.mode & 0o111).not.toBe(0);

      const unpacked = await tempDir();
      await run('tar', ['-xzf', join(out, packed!.filename), '-C', unpacked]);
      const pkg = join(unpacked, 'package');
      // The bin is run through its shebang.
      expect(readFileSync(join(pkg, 'dist/cli.js'), 'utf8').split('\n', 1)[0]).toBe('#!/usr/bin/env node');

      const prefix = await tempDir();
      await run('npm', ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', pkg], { cwd: unpacked });
      const bin = join(prefix, 'bin', 'switchboard');
      accessSync(bin, constants.X_OK);

      const elsewhere = await tempDir();
      mkdirSync(join(elsewhere, 'home'));
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: join(elsewhere, 'home') };
      delete env.SWITCHBOARD_CONFIG;
      // Run as a shell runs it: the file itself, found through the shebang, not `node file`.
      expect((await run(bin, ['--version'], { cwd: elsewhere, env })).stdout).toBe(`switchboard ${PACKAGE.version}\n`);
      // A command that loads the bundle's lazily loaded chunks from the installed location.
      const discover = JSON.parse((await run(bin, ['discover', '--json'], { cwd: elsewhere, env })).stdout) as { servers: unknown[] };
      expect(discover.servers).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
