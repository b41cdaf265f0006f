import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runLogs } from '../../src/cli/client/logs.js';
import { COMMANDS, runCli } from '../../src/cli/dispatch.js';
import { HELP } from '../../src/cli/help.js';
import { CLI_BUNDLE } from '../helpers/build-fixtures.js';
import { nextDaemonEvent, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { sharedByTests } from '../helpers/shared.js';

/**
 * Issue #15, item 5: the `switchboard` CLI as a user runs it — the bundle `npm start` builds, in
 * its own process — plus `logs` in-process where a test has to stop a follow.
 */

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `sh -c script` with the CLI as "$SB", with a clean Switchboard environment. */
function sh(script: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const clean: NodeJS.ProcessEnv = { ...process.env, SB: `${process.execPath} ${CLI_BUNDLE}`, ...env };
  for (const name of ['SWITCHBOARD_URL', 'SWITCHBOARD_TOKEN', 'SWITCHBOARD_CONFIG']) if (!(name in env)) delete clean[name];
  const child = spawn('/bin/bash', ['-c', `set -o pipefail; ${script}`], { env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Captured output whose waits resolve as soon as the text shows up. */
function capture() {
  let text = '';
  const waiters = new Set<() => void>();
  return {
    output: {
      write: (chunk: string) => {
        text += chunk;
        for (const wake of waiters) wake();
      },
    },
    text: () => text,
    until: (needle: string) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (!text.includes(needle)) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
  };
}

/**
 * One daemon for the file's tests that talk to a daemon, with an introspect server per `logs`
 * test (`printed`, `followed`, `interrupted`): each test reads the log of its own server only,
 * and none of them changes the daemon.
 */
const introspectDaemon = sharedByTests(
  (): Promise<TestDaemon> =>
    startDaemon({
      servers: Object.fromEntries(['printed', 'followed', 'interrupted'].map((name) => [name, fixtureServerConfig('introspect')])),
      lifetime: 'manual',
    }),
  (d) => d.close(),
);

async function callTool(d: TestDaemon, server: string, tool: string, args: Record<string, unknown>): Promise<void> {
  const res = await d.json(`/tools/mcp_${server}_${tool}/call`, { method: 'POST', body: { arguments: args } });
  expect(res.status).toBe(200);
}

describe('switchboard --version and --help', () => {
  it('--version prints the package version', async () => {
    expect(await sh('$SB --version')).toEqual({ code: 0, stdout: `switchboard ${VERSION}\n`, stderr: '' });
  });

  it('--help of every command shows its usage, every flag and an example', async () => {
    expect(Object.keys(HELP).sort()).toEqual(Object.keys(COMMANDS).sort());
    // `serve` in its own process (in-process it would arm its exit failsafe in the test worker);
    // the same dispatcher in-process for the rest, which is fast.
    const serve = await sh('$SB serve --help');
    expect(serve).toMatchObject({ code: 0, stdout: expect.stringMatching(/^usage: switchboard serve /), stderr: '' });
    for (const [flag] of HELP.serve!.options) expect(serve.stdout, `serve ${flag}`).toContain(flag);
    for (const command of Object.keys(COMMANDS).filter((name) => name !== 'serve')) {
      const out = capture();
      const err = capture();
      const code = await runCli({ argv: [command, '--help'], env: {}, home: '/nonexistent', cwd: '/', stdout: out.output, stderr: err.output });
      expect(code, command).toBe(0);
      expect(out.text(), command).toMatch(new RegExp(`^usage: switchboard ${command} `));
      for (const [flag] of HELP[command]!.options) expect(out.text(), `${command} ${flag}`).toContain(flag);
      expect(out.text(), command).toMatch(/\nExamples?:\n {2}switchboard /);
      expect(err.text(), command).toBe('');
    }
  });

  it('an unknown command is one line and exit 2', async () => {
    const run = await sh('$SB frobnicate');
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')).toEqual([expect.stringMatching(/^switchboard: unknown command "frobnicate"/), '']);
  });
});

describe('a client command whose reader goes away', () => {
  it('`switchboard tools | head -1` ends quietly with status 0, every time', async () => {
    // About 100 KB of table: more than a pipe holds, so the CLI is still writing when head exits.
    // (Few pages: the SDK v1 client leaves an abort listener per page on the list's deadline signal.)
    const d = await startDaemon({ servers: { many: fixtureServerConfig('paginated', { env: { PAGES: '2', PAGE_SIZE: '1000' } }) } });
    // Ten pipelines, five at a time: each exit status is the CLI's (pipefail), each stderr empty.
    const runs: Run[] = [];
    const five = [0, 1, 2, 3, 4];
    for (let i = 0; i < 10; i += 5) runs.push(...(await Promise.all(five.map(() => sh(`$SB tools --url ${d.url} | head -1`)))));
    for (const run of runs) expect(run).toEqual({ code: 0, stdout: expect.stringMatching(/^NAME\s+SERVER\s+DESCRIPTION\n$/), stderr: '' });
  }, 60_000);
});

describe('unknown names', () => {
  it('an unknown server or tool is one line and exit 1; a reload of it leaves no event', async () => {
    const d = await introspectDaemon();
    const scripts = [`$SB logs ghost --url ${d.url}`, `$SB reload ghost --url ${d.url}`, `$SB call mcp_ghost_x --url ${d.url}`];
    const runs = await Promise.all(scripts.map((script) => sh(script)));
    runs.forEach((run, i) => {
      expect(run.code, scripts[i]).toBe(1);
      expect(run.stderr.split('\n'), scripts[i]).toEqual([expect.stringMatching(/^switchboard: (SERVER|TOOL)_NOT_FOUND: /), '']);
    });
    expect(d.daemon.events.since(0)?.filter((e) => e.type.startsWith('reload.'))).toEqual([]);
  });
});

describe('switchboard logs', () => {
  it("prints the server's stderr and its MCP log messages, -n the last lines", async () => {
    const d = await introspectDaemon();
    await callTool(d, 'printed', 'log_stderr', { lines: ['first', 'second'] });
    await callTool(d, 'printed', 'log_message', { level: 'warning', logger: 'db', data: 'connection lost' });

    const [all, last] = await Promise.all([sh(`$SB logs printed --url ${d.url}`), sh(`$SB logs printed -n 1 --url ${d.url}`)]);
    expect(all).toEqual({ code: 0, stdout: 'first\nsecond\n[log warning] db: connection lost\n', stderr: '' });
    expect(last.stdout).toBe('[log warning] db: connection lost\n');
  });

  it('--follow prints new lines as they come, each once, until stopped', async () => {
    const d = await introspectDaemon();
    await callTool(d, 'followed', 'log_stderr', { lines: ['before'] });
    const out = capture();
    const err = capture();
    const stop = new AbortController();
    onTestFinished(() => stop.abort());
    const following = runLogs({ argv: ['followed', '--follow', '--url', d.url], env: {}, stdout: out.output, stderr: err.output, signal: stop.signal });
    await out.until('before\n');

    const batch = nextDaemonEvent(d.daemon, 'server.log', (e) => e.lines.includes('during'));
    await callTool(d, 'followed', 'log_stderr', { lines: ['during'] });
    await batch;
    await callTool(d, 'followed', 'log_message', { level: 'info', data: 'hello from the server' });
    await out.until('[log info] hello from the server\n');
    stop.abort();
    expect(await following).toBe(0);
    expect(out.text()).toBe('before\nduring\n[log info] hello from the server\n');
    expect(err.text()).toBe('');
  });

  it('--follow in its own process ends with status 0 on Ctrl-C', async () => {
    const d = await introspectDaemon();
    const child = spawn(process.execPath, [CLI_BUNDLE, 'logs', 'interrupted', '--follow', '--url', d.url], { stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => void child.kill('SIGKILL'));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const out = capture();
    createInterface({ input: child.stdout }).on('line', (line) => out.output.write(`${line}\n`));
    // The follow is live once it has printed the history; the line written next must come through.
    await callTool(d, 'interrupted', 'log_stderr', { lines: ['history'] });
    await out.until('history\n');
    await callTool(d, 'interrupted', 'log_stderr', { lines: ['live line'] });
    await out.until('live line\n');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(out.text()).toBe('history\nlive line\n');
  });
});
