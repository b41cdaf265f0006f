import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { isProcessGone, tempDir, watchdogOf } from '../helpers/process.js';
import { spawnServe } from '../helpers/serve-process.js';
import { isAlive, scanProcesses, waitForProcessesExit, type ProcessRef } from '../../src/util/process-tree.js';

/**
 * Issue #42: stdio servers in a bubblewrap sandbox, against real processes. One daemon serves the
 * probe fixture sandboxed (`boxed`) and not (`open`, so each denial can fail), and the real npm
 * servers server-memory and server-filesystem sandboxed with their data folders allowed; a second
 * daemon, whose PATH has no bwrap, shows SANDBOX_UNAVAILABLE beside a server that runs.
 */

type CallResult = { content: Array<{ type: string; text: string }>; isError?: boolean };
type Probe = { ok: boolean; code?: string; content?: string; pids?: number[]; home?: string; cwd?: string; env?: string[] };

/** A devDependency's bin script, run with this Node (no npx: the test stays offline and fast). */
function binOf(pkg: string): string {
  const manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: string | Record<string, string> };
  return join(dirname(manifest), typeof bin === 'string' ? bin : (Object.values(bin)[0] as string));
}

/**
 * The repository the fixtures and node_modules run from. A sandbox's `/tmp` is its own, so a clone
 * under /tmp (as CI makes one) is hidden from the server like any folder there: it is allowed
 * back, as a user allows the folder a server runs from (README "Sandboxing stdio servers").
 */
const REPO = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const REPO_READ = REPO === '/tmp' || REPO.startsWith('/tmp/') ? [REPO] : [];

let root: string;
let home: string;
let storeFile: string;
let work: string;
let outside: string;
let shared: string;
let data: string;
let listener: Server;
let port: number;
let d: TestDaemon;

async function call(tool: string, args: Record<string, unknown> = {}): Promise<CallResult> {
  const { status, body } = await d.json<CallResult>(`/tools/${tool}/call`, { method: 'POST', body: { arguments: args } });
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

async function probe(server: 'boxed' | 'open', tool: string, args: Record<string, unknown> = {}): Promise<Probe> {
  const result = await call(`mcp_${server}_${tool}`, args);
  return JSON.parse(result.content[0]?.text ?? '{}') as Probe;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'switchboard-sandbox-'));
  home = join(root, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY');
  // The store lives under a folder the sandboxed server may read: only the mask hides it.
  storeFile = join(home, '.local', 'state', 'switchboard', 'switchboard.db');
  work = join(root, 'work');
  outside = join(root, 'outside');
  shared = join(root, 'shared');
  data = join(root, 'data');
  for (const dir of [work, outside, shared, data]) mkdirSync(dir, { recursive: true });
  listener = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
  await once(listener, 'listening');
  port = (listener.address() as { port: number }).port;

  const probeConfig = fixtureServerConfig('sandbox-probe');
  const servers: Record<string, ServerConfig> = {
    boxed: { ...probeConfig, cwd: work, sandbox: { allowRead: [join(home, '.local'), ...REPO_READ], allowWrite: [shared], network: 'none' } },
    open: { ...probeConfig, cwd: work },
    memory: {
      command: process.execPath,
      args: [binOf('@modelcontextprotocol/server-memory')],
      env: { MEMORY_FILE_PATH: join(data, 'memory.jsonl') },
      sandbox: { allowWrite: [data], allowRead: REPO_READ },
    },
    files: {
      command: process.execPath,
      args: [binOf('@modelcontextprotocol/server-filesystem'), data],
      sandbox: REPO_READ.length > 0 ? { allowRead: REPO_READ } : true,
      cwd: data,
    },
  };
  d = await startDaemon({
    servers,
    lifetime: 'manual',
    captureLogs: 'info',
    config: { dbPath: storeFile },
    deps: { home, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
  });
});

afterAll(async () => {
  await d?.close();
  listener?.close();
  await rm(root, { recursive: true, force: true });
});

describe('a sandboxed stdio server', () => {
  it('is denied, with the kernel’s error, what the same server unsandboxed can do', async () => {
    const key = join(home, '.ssh', 'id_ed25519');
    expect(await probe('open', 'read_file', { path: key })).toMatchObject({ ok: true, content: 'PRIVATE KEY' });
    expect(await probe('boxed', 'read_file', { path: key })).toMatchObject({ ok: false, code: 'ENOENT' });

    expect(existsSync(storeFile)).toBe(true);
    expect(await probe('open', 'read_file', { path: storeFile })).toMatchObject({ ok: true });
    expect(await probe('boxed', 'read_file', { path: storeFile })).toMatchObject({ ok: false, code: 'ENOENT' });

    const beyond = join(outside, 'note.txt');
    expect(await probe('boxed', 'write_file', { path: beyond })).toMatchObject({ ok: false, code: 'ENOENT' });
    expect(existsSync(beyond)).toBe(false);
    expect(await probe('boxed', 'write_file', { path: '/etc/switchboard-sandbox-probe' })).toMatchObject({ ok: false, code: 'EROFS' });
    expect(await probe('open', 'write_file', { path: beyond })).toMatchObject({ ok: true });
    expect(readFileSync(beyond, 'utf8')).toBe('written by sandbox-probe');

    expect(await probe('boxed', 'write_file', { path: join(shared, 'allowed.txt') })).toMatchObject({ ok: true });
    expect(readFileSync(join(shared, 'allowed.txt'), 'utf8')).toBe('written by sandbox-probe');
    expect(await probe('boxed', 'write_file', { path: join(work, 'in-cwd.txt') })).toMatchObject({ ok: true });
    expect(existsSync(join(work, 'in-cwd.txt'))).toBe(true);

    expect(await probe('open', 'connect', { port })).toMatchObject({ ok: true });
    expect(await probe('boxed', 'connect', { port })).toMatchObject({ ok: false, code: 'ECONNREFUSED' });

    const seenOpen = await probe('open', 'list_processes');
    expect(seenOpen.pids).toContain(process.pid);
    const seenBoxed = await probe('boxed', 'list_processes');
    expect(seenBoxed.ok).toBe(true);
    expect(seenBoxed.pids).not.toContain(process.pid);
    // Its own PID namespace: bwrap's init and the server, nothing of the host.
    expect(Math.max(...(seenBoxed.pids ?? [99]))).toBeLessThan(10);
  });

  it('gets only the configured env, an empty private $HOME, and is shown as sandboxed', async () => {
    const me = await probe('boxed', 'whoami');
    expect(me).toMatchObject({ home, cwd: work });
    // PWD is bwrap's, from --chdir.
    expect(me.env).toEqual(['HOME', 'PATH', 'PWD', 'TMPDIR']);

    const { body } = await d.json<{ sandbox: unknown; status: string }>('/servers/boxed');
    expect(body.status).toBe('connected');
    expect(body.sandbox).toEqual({ read: ['/', join(home, '.local'), ...REPO_READ], write: ['/tmp', work, shared], network: 'none', memoryMiB: null, pids: null });
    expect((await d.json<{ sandbox: unknown }>('/servers/open')).body.sandbox).toBeNull();
    const started = d.logs.entries().find((entry) => entry.server === 'boxed' && entry.msg === 'starting in a sandbox');
    expect(started?.sandbox).toEqual(body.sandbox);
  });
});

describe('real npm servers, sandboxed', () => {
  it('server-memory keeps its graph in the allowed folder', async () => {
    await call('mcp_memory_create_entities', { entities: [{ name: 'sandbox', entityType: 'feature', observations: ['issue 42'] }] });
    const graph = await call('mcp_memory_read_graph');
    expect(graph.content[0]?.text).toContain('issue 42');
    expect(readFileSync(join(data, 'memory.jsonl'), 'utf8')).toContain('sandbox');
  });

  it('server-filesystem writes and reads inside its folder, and is shown with the strict defaults', async () => {
    const path = join(data, 'hello.txt');
    await call('mcp_files_write_file', { path, content: 'from the sandbox' });
    expect(readFileSync(path, 'utf8')).toBe('from the sandbox');
    expect((await call('mcp_files_read_text_file', { path })).content[0]?.text).toBe('from the sandbox');
    const { body } = await d.json<{ sandbox: { network: string; write: string[] } }>('/servers/files');
    expect(body.sandbox).toMatchObject({ network: 'host', write: ['/tmp', data] });
  });
});

describe('without bubblewrap', () => {
  it('fails that server with SANDBOX_UNAVAILABLE and the reason; the other servers run', async () => {
    const empty = join(root, 'no-bwrap');
    mkdirSync(empty, { recursive: true });
    const other = await startDaemon({
      servers: { boxed: { ...fixtureServerConfig('sandbox-probe'), sandbox: true }, plain: fixtureServerConfig('echo-stdio') },
      deps: { env: { PATH: empty } },
    });
    const { body } = await other.json<{ status: string; lastError: { code: string; message: string } | null; pid: number | null }>('/servers/boxed');
    expect(body.status).toBe('failed');
    expect(body.pid).toBeNull();
    expect(body.lastError?.code).toBe('SANDBOX_UNAVAILABLE');
    expect(body.lastError?.message).toContain(`bubblewrap ("bwrap") is not on PATH (searched ${empty})`);
    expect(body.lastError?.message).toContain('apt-get install bubblewrap');
    const plain = await other.json<{ status: string }>('/servers/plain');
    expect(plain.body.status).toBe('connected');
    const echoed = await other.json<CallResult>('/tools/mcp_plain_echo/call', { method: 'POST', body: { arguments: { text: 'still here' } } });
    expect(echoed.body.content[0]?.text).toBe('still here');
  });
});

describe('teardown', () => {
  it('closing the daemon ends every process of each sandbox: bwrap, its init and the server', async () => {
    const leaders = await Promise.all(['boxed', 'memory', 'files'].map(async (name) => (await d.json<{ pid: number | null }>(`/servers/${name}`)).body.pid));
    const processes = scanProcesses();
    const tree = (pid: number): number[] => [pid, ...processes.filter((p) => p.ppid === pid).flatMap((p) => tree(p.pid))];
    const pids = leaders.flatMap((pid) => (pid === null ? [] : tree(pid)));
    // bwrap, the namespace's init and the server, for each of the three.
    expect(pids.length).toBeGreaterThanOrEqual(9);
    await d.close();
    expect(pids.filter((pid) => !isProcessGone(pid))).toEqual([]);
  });
});

describe('no orphans', () => {
  it('a daemon killed with SIGKILL, its watchdog first, still takes its sandboxed server along (--die-with-parent)', async () => {
    const dir = await tempDir();
    const configPath = join(dir, 'switchboard.json');
    // A server that outlives its stdin and SIGTERM: only a SIGKILL ends it.
    const boxed = { ...fixtureServerConfig('echo-stdio', { env: { IGNORE_STDIN_EOF: '1', IGNORE_SIGTERM: '1' } }), sandbox: { network: 'none', allowRead: REPO_READ } };
    await writeFile(configPath, JSON.stringify({ dbPath: join(dir, 'state', 'cache.db'), mcpServers: { boxed } }));
    const serve = spawnServe(['--config', configPath, '--port', '0'], { home: dir, cwd: dir });
    await serve.waitForLog((entry) => entry.msg === 'connected' && entry.server === 'boxed');
    const watchdog = watchdogOf(serve.child.pid as number);
    expect(watchdog).toBeDefined();
    const processes = scanProcesses();
    const tree = (pid: number): ProcessRef[] => processes.filter((p) => p.ppid === pid).flatMap((p) => [{ pid: p.pid, startTime: p.startTime }, ...tree(p.pid)]);
    const sandboxed = tree(serve.child.pid as number).filter((ref) => ref.pid !== watchdog!.pid);
    onTestFinished(() => {
      for (const ref of sandboxed) if (isAlive(ref)) process.kill(ref.pid, 'SIGKILL');
    });
    // bwrap, the namespace's init, the server.
    expect(sandboxed.length).toBeGreaterThanOrEqual(3);

    // The watchdog goes first, as in an OOM kill of the whole cgroup: only bwrap's parent-death signal is left.
    process.kill(watchdog!.pid, 'SIGKILL');
    expect(await waitForProcessesExit([watchdog!], 5_000, 50)).toBe(true);
    serve.child.kill('SIGKILL');
    expect(await serve.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await waitForProcessesExit(sandboxed, 10_000, 50)).toBe(true);
  }, 60_000);
});
