import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { CLI_BUNDLE } from './build-fixtures.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the `switchboard` CLI bundle as its own process, to its end: exit code and all it printed. */
export async function runCli(args: readonly string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliRun> {
  const child = spawn(process.execPath, [CLI_BUNDLE, ...args], { env: options.env, ...(options.cwd ? { cwd: options.cwd } : {}), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}
