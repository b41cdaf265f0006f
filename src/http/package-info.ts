import { readFileSync } from 'node:fs';

/**
 * Compiled in by the CLI bundle (scripts/bundle.mjs `define`): the bundle's chunks do not sit
 * where package.json can be found relative to them.
 */
declare const __SWITCHBOARD_VERSION__: string | undefined;

/**
 * The daemon's own version. From source and from the `tsc` build, `src/http/` and `dist/http/`
 * are both two levels below the package root, so one relative URL finds package.json.
 */
export const PACKAGE_VERSION: string = typeof __SWITCHBOARD_VERSION__ === 'string' ? __SWITCHBOARD_VERSION__ : readVersion();

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    // An embedder that bundles the code without package.json still gets a working /status.
    return '0.0.0';
  }
}
