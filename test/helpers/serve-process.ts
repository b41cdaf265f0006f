import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import { onTestFinished } from 'vitest';
import { CLI_BUNDLE } from './build-fixtures.js';
import type { Cleanup } from './process.js';
import { warningLines } from './warnings.js';

export type LogEntry = Record<string, unknown> & { msg?: string };

export interface ServeProcess {
  child: ChildProcess;
  /** Resolves with the first log entry (past or future) that matches; rejects if the process exits first. */
  waitForLog(match: (entry: LogEntry) => boolean): Promise<LogEntry>;
  /** Resolves with the first raw stdout line (past or future) that matches (for `--log-format pretty`). */
  waitForLine(match: (line: string) => boolean): Promise<string>;
  /** Every stdout line so far, raw. */
  lines(): readonly string[];
  /** Resolves with the base URL from the "listening on …" line. */
  listening(): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  /** Every log entry read so far, in order. */
  entries(): readonly LogEntry[];
}

/** Variables of the test runner's env that would change what `serve` does. */
const DAEMON_ENV = [
  'SWITCHBOARD_CONFIG',
  'SWITCHBOARD_TOKEN',
  'SWITCHBOARD_DATABASE_URL',
  'SWITCHBOARD_HOST',
  'SWITCHBOARD_PORT',
  'XDG_STATE_HOME',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
];

/**
 * `switchboard serve` as a real child process, with HOME and the working directory in temp dirs
 * so discovery never reads the real user's files, and `dirs.env` over the runner's environment.
 * Killed when the test finishes.
 */
export function spawnServe(args: string[], dirs: { home: string; cwd: string; env?: Record<string, string> }, cleanup: Cleanup = onTestFinished): ServeProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dirs.home };
  for (const name of DAEMON_ENV) delete env[name];
  Object.assign(env, dirs.env);
  const child = spawn(process.execPath, [CLI_BUNDLE, 'serve', ...args], {
    cwd: dirs.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': by then every log line the process wrote has been read.
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  cleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    // The daemon's own process warnings fail the test, as the setup file does for the worker's.
    const warnings = warningLines(stderr);
    if (warnings.length > 0) throw new Error(`switchboard serve printed process warnings:\n${warnings.join('\n')}`);
  });

  const entries: LogEntry[] = [];
  const raw: string[] = [];
  const lines = new EventEmitter();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    raw.push(line);
    lines.emit('line', line);
    try {
      const entry = JSON.parse(line) as LogEntry;
      entries.push(entry);
      lines.emit('entry', entry);
    } catch {
      // Not a log line; nothing to match.
    }
  });

  const waitForLog = (match: (entry: LogEntry) => boolean): Promise<LogEntry> => {
    const seen = entries.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const onEntry = (entry: LogEntry): void => {
        if (!match(entry)) return;
        lines.off('entry', onEntry);
        resolve(entry);
      };
      lines.on('entry', onEntry);
      void exited.then(({ code, signal }) => {
        lines.off('entry', onEntry);
        reject(new Error(`serve exited (${code ?? signal}) before the log line:\n${stderr}`));
      });
    });
  };
  const waitForLine = (match: (line: string) => boolean): Promise<string> => {
    const seen = raw.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const onLine = (line: string): void => {
        if (!match(line)) return;
        lines.off('line', onLine);
        resolve(line);
      };
      lines.on('line', onLine);
      void exited.then(({ code, signal }) => {
        lines.off('line', onLine);
        reject(new Error(`serve exited (${code ?? signal}) before the line:\n${stderr}`));
      });
    });
  };
  const listening = async (): Promise<string> => {
    const entry = await waitForLog((e) => typeof e.url === 'string' && e.msg?.startsWith('listening') === true);
    return entry.url as string;
  };
  return { child, waitForLog, waitForLine, lines: () => raw, listening, exited, stderr: () => stderr, entries: () => entries };
}
