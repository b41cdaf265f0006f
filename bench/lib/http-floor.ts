import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { track } from './reaper.js';

const SERVER = fileURLToPath(new URL('./http-floor-server.mjs', import.meta.url));

/** Starts the bare node:http reference server (see http-floor-server.mjs) in its own process. */
export function startHttpFloor(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  return startServerProcess(SERVER);
}

/** The OTLP/HTTP sink of `BENCH_OTLP` runs (see otlp-sink-server.mjs), in its own process. */
export function startOtlpSink(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  return startServerProcess(fileURLToPath(new URL('./otlp-sink-server.mjs', import.meta.url)));
}

/** A small server script in its own process that prints its port as its first line. */
async function startServerProcess(script: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  track(child);
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout });
  const port = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before listening`)));
  });
  lines.close();
  return {
    url: `http://127.0.0.1:${port.trim()}`,
    pid: child.pid as number,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
