import { readFileSync } from 'node:fs';

/**
 * The daemon's own version, read once from package.json. `src/http/` and `dist/http/` are both
 * two levels below the package root, so one relative URL works from source and from the build.
 */
export const PACKAGE_VERSION: string = readVersion();

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    // An embedder that bundles the code without package.json still gets a working /status.
    return '0.0.0';
  }
}
