import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ServerConfig } from '../../src/config/types.js';
import { startOtlpSink } from './http-floor.js';
import { descendantPids, isAlive, killGroup } from './proc.js';
import { track, trackDir } from './reaper.js';

/**
 * `switchboard serve` as a real process — `node dist/cli.js serve --port 0 --config <file>
 * --no-project-config` with HOME, the working directory and the database in a temp workspace —
 * so every benchmark measures the daemon as it ships, in its own process, and the bench process
 * is only ever the client.
 */

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The CLI to run; BENCH_CLI points at another build (e.g. a worktree's dist) for an A/B run. */
const CLI = process.env.BENCH_CLI ?? join(REPO_ROOT, 'dist', 'cli.js');
const GC_PRELOAD = fileURLToPath(new URL('./gc-preload.mjs', import.meta.url));

/** A temp HOME, working directory and database: reuse one for a warm-cache start. */
export interface Workspace {
  dir: string;
  home: string;
  cwd: string;
  dbPath: string;
  remove(): Promise<void>;
}

export async function createWorkspace(): Promise<Workspace> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-bench-'));
  const untrack = trackDir(dir);
  const home = join(dir, 'home');
  const cwd = join(dir, 'cwd');
  await Promise.all([mkdir(home), mkdir(cwd)]);
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true }).then(untrack);
  return { dir, home, cwd, dbPath: join(dir, 'switchboard.db'), remove };
}

export interface ServeOptions {
  servers: Record<string, ServerConfig>;
  /** @default a fresh workspace, removed on stop */
  workspace?: Workspace;
  /** Extra fields of the daemon's config file. */
  config?: Record<string, unknown>;
  /** Write a V8 CPU profile of the daemon into this directory (`--cpu-prof`). */
  cpuProfileDir?: string;
  /** Start with `--expose-gc` and a SIGUSR2 → gc() hook (see `gc()`). */
  exposeGc?: boolean;
  /** @default BENCH_CLI, else dist/cli.js */
  cli?: string;
  /** A fixed port (a replica restarted behind a balancer keeps its address). @default 0: any free port */
  port?: number;
}

type LogEntry = Record<string, unknown> & { msg?: string };

export interface ServeProcess {
  pid: number;
  /** `performance.now()` just before spawn. */
  spawnedAt: number;
  /** Resolves with the base URL once the "listening on" log line arrived. */
  listening: Promise<string>;
  /** `performance.now()` when that line arrived. */
  listeningAt(): number | undefined;
  workspace: Workspace;
  /** Every log entry so far (pino JSON lines from stdout). */
  logs(): readonly LogEntry[];
  /** Resolves with the first log entry (past or future) that matches. */
  waitForLog(match: (entry: LogEntry) => boolean): Promise<LogEntry>;
  /** Runs a full GC in the daemon (needs `exposeGc`); resolves when it is done, with its heap after it. */
  gc(): Promise<HeapAfterGc>;
  /** SIGTERM, wait for a clean exit (SIGKILL after `graceMs`), then check nothing was left behind. */
  stop(graceMs?: number): Promise<StopOutcome>;
}

/** `process.memoryUsage()` fields of the daemon, right after a full GC. */
export interface HeapAfterGc {
  heapUsed: number;
  /** V8 heap committed: it stays grown after a busy spell, and counts in RSS. */
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Each V8 heap space's physical (committed and touched) size, by V8's name: `new_space`, `old_space`, … */
  spaces: Record<string, number>;
}

export interface StopOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Descendants still alive after the daemon exited (then killed here): should always be 0. */
  orphans: number;
}

export async function startServe(options: ServeOptions): Promise<ServeProcess> {
  const ownWorkspace = options.workspace === undefined;
  const workspace = options.workspace ?? (await createWorkspace());
  const configPath = join(workspace.dir, 'switchboard.json');
  // BENCH_OTLP=protobuf|json: the daemon exports its spans and metrics to a sink of its own (issue #26).
  const otlp = process.env.BENCH_OTLP ? await startOtlpSink() : undefined;
  const telemetry = otlp ? { telemetry: { endpoint: otlp.url, protocol: process.env.BENCH_OTLP === 'json' ? 'http/json' : 'http/protobuf' } } : {};
  // BENCH_CONFIG='{"maxConcurrentCalls":16}': top-level config fields for every daemon of the run, e.g. pinned limits (issue #35).
  const extra = process.env.BENCH_CONFIG ? (JSON.parse(process.env.BENCH_CONFIG) as Record<string, unknown>) : {};
  await writeFile(configPath, JSON.stringify({ dbPath: workspace.dbPath, logLevel: 'info', mcpServers: options.servers, ...telemetry, ...extra, ...options.config }));

  const env: NodeJS.ProcessEnv = { ...process.env, HOME: workspace.home };
  for (const name of [
    'SWITCHBOARD_CONFIG',
    'SWITCHBOARD_TOKEN',
    'SWITCHBOARD_HOST',
    'SWITCHBOARD_PORT',
    'SWITCHBOARD_MCP_TIMEOUT_MS',
    'XDG_STATE_HOME',
    'NODE_OPTIONS',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  ]) {
    delete env[name];
  }
  const nodeArgs: string[] = [];
  if (options.cpuProfileDir) {
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`);
    const interval = process.env.BENCH_CPU_PROF_INTERVAL_US;
    if (interval) nodeArgs.push(`--cpu-prof-interval=${interval}`);
  }
  if (options.exposeGc) nodeArgs.push('--expose-gc', '--import', GC_PRELOAD);

  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, options.cli ?? CLI, 'serve', '--port', String(options.port ?? 0), '--config', configPath, '--no-project-config'], {
    cwd: workspace.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  const pid = child.pid as number;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));

  let stderr = '';
  const stderrLines = createInterface({ input: child.stderr! });
  const entries: LogEntry[] = [];
  const waiters = new Set<(entry: LogEntry) => void>();
  let listeningAt: number | undefined;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let entry: LogEntry;
    try {
      entry = JSON.parse(line) as LogEntry;
    } catch {
      return;
    }
    entries.push(entry);
    for (const waiter of waiters) waiter(entry);
  });
  stderrLines.on('line', (line) => (stderr += `${line}\n`));

  const waitForLog = (match: (entry: LogEntry) => boolean): Promise<LogEntry> => {
    const seen = entries.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = (entry: LogEntry): void => {
        if (!match(entry)) return;
        waiters.delete(waiter);
        resolve(entry);
      };
      waiters.add(waiter);
      void exited.then(({ code, signal }) => {
        if (!waiters.delete(waiter)) return;
        reject(new Error(`switchboard serve exited (${code ?? signal}) before the expected log line:\n${stderr}`));
      });
    });
  };

  // src/cli/serve.ts logs `{url, host, port, msg: "listening on <url>"}` once the port is bound.
  const listening = waitForLog((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('listening on ')).then((entry) => {
    listeningAt ??= performance.now();
    return `http://127.0.0.1:${entry.port as number}`;
  });
  listening.catch(() => undefined);

  const gc = async (): Promise<HeapAfterGc> => {
    if (!options.exposeGc) throw new Error('startServe: gc() needs exposeGc');
    const done = new Promise<HeapAfterGc>((resolve) => {
      const onLine = (line: string): void => {
        if (!line.startsWith('bench-gc-done ')) return;
        stderrLines.off('line', onLine);
        resolve(JSON.parse(line.slice('bench-gc-done '.length)) as HeapAfterGc);
      };
      stderrLines.on('line', onLine);
    });
    child.kill('SIGUSR2');
    return done;
  };

  const stop = async (graceMs = 20_000): Promise<StopOutcome> => {
    const descendants = descendantPids(pid);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const outcome = await exited;
    clearTimeout(timer);
    await otlp?.stop();
    let orphans = 0;
    for (const descendant of descendants) {
      if (!isAlive(descendant)) continue;
      orphans += 1;
      killGroup(descendant);
    }
    if (ownWorkspace) await workspace.remove();
    return { ...outcome, orphans };
  };

  return {
    pid,
    spawnedAt,
    listening,
    listeningAt: () => listeningAt,
    workspace,
    logs: () => entries,
    waitForLog,
    gc,
    stop,
  };
}
