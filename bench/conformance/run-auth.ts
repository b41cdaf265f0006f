/**
 * Runs every client-mode `auth/*` scenario of the conformance suite against Switchboard (through
 * auth-driver.ts), one at a time, and prints one line per scenario and a total.
 *
 *   CONFORMANCE="node /path/to/@modelcontextprotocol/conformance/dist/index.js" \
 *     node --import tsx bench/conformance/run-auth.ts [scenario-prefix]
 *
 * `CONFORMANCE` is the command that runs the suite's CLI (default: `npx @modelcontextprotocol/conformance`).
 * Results (checks.json, the driver's stdout/stderr) go to bench/results/conformance/.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = fileURLToPath(new URL('../results/conformance/', import.meta.url));
const [cli, ...cliArgs] = (process.env.CONFORMANCE ?? 'npx @modelcontextprotocol/conformance').split(' ').filter(Boolean) as [string, ...string[]];
const prefix = process.argv[2] ?? 'auth/';

async function conformance(args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(cli, [...cliArgs, ...args], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 180_000 });
    return stdout + stderr;
  } catch (err) {
    const failed = err as { stdout?: string; stderr?: string };
    return (failed.stdout ?? '') + (failed.stderr ?? '');
  }
}

const listing = await conformance(['list']);
const client = listing.slice(listing.indexOf('Client scenarios'));
const scenarios = [...client.matchAll(/^\s+- (\S+) \[([^\]]*)\]/gm)].map((m) => ({ name: m[1] as string, versions: m[2] as string })).filter((s) => s.name.startsWith(prefix));
let passed = 0;
for (const { name, versions } of scenarios) {
  const output = await conformance(['client', '--command', 'node --import tsx bench/conformance/auth-driver.ts', '--scenario', name, '-o', OUT]);
  const counts = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
  const ok = /OVERALL: PASSED/.test(output);
  if (ok) passed += 1;
  const failures = [...output.matchAll(/^\s+- ([^:\n]+):/gm)].map((m) => m[1]).slice(0, 3);
  process.stdout.write(
    `${ok ? 'PASS' : 'FAIL'}  ${name.padEnd(44)} [${versions}]  ${counts ? `${counts[1]}/${counts[2]} checks` : 'no result'}${ok ? '' : `  ${failures.join('; ')}`}\n`,
  );
}
process.stdout.write(`\n${passed}/${scenarios.length} scenarios pass\n`);
