import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, it } from 'vitest';
import { fixtureServerConfig, fixturePath } from '../helpers/fixtures.js';
import { freePort } from '../helpers/free-port.js';
import { tempDir } from '../helpers/process.js';
import { spawnServe, type LogEntry, type ServeProcess } from '../helpers/serve-process.js';

/**
 * Issue #25 item 1: every config mistake reaches the daemon's log — once, when it appears or
 * changes, with the file and the reason — at start and on a live edit. A real `switchboard serve`
 * over a temp HOME holding the files of real clients (Claude Code, Cursor, VS Code, Gemini CLI)
 * and Switchboard's own file.
 */

/** A real daemon process plus its fixture servers: a loaded two-core box needs the time. */
const SPAWN_TIMEOUT_MS = 90_000;

async function writeJson(path: string, value: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, JSON.stringify(value, null, 2));
}

const isConfigWarning = (entry: LogEntry): boolean => entry.level === 40 && entry.component === 'config';

/** Every config warning whose message contains `text`. */
function warnings(serve: ServeProcess, text: string): LogEntry[] {
  return serve.entries().filter((entry) => isConfigWarning(entry) && entry.msg?.includes(text) === true);
}

function waitForWarning(serve: ServeProcess, text: string): Promise<LogEntry> {
  return serve.waitForLog((entry) => isConfigWarning(entry) && entry.msg?.includes(text) === true);
}

// The three tests run side by side, each with its own HOME, working directory, port and `serve`
// (three daemons at most): each waits mostly on its daemon's start and its config watcher. Being
// concurrent, each registers its cleanups and asserts through its own context.
describe.concurrent('config mistakes in the log (real serve, real client files)', () => {
  it(
    'logs each mistake once at start and with the live edit that makes or mends it',
    async ({ expect, onTestFinished }) => {
      const home = await realpath(await tempDir(onTestFinished));
      const cwd = await realpath(await tempDir(onTestFinished));
      const port = await freePort();
      const echo = fixtureServerConfig('echo-stdio');
      const files = {
        claude: join(home, '.claude.json'),
        cursor: join(home, '.cursor', 'mcp.json'),
        vscode: join(home, '.config', 'Code', 'User', 'mcp.json'),
        gemini: join(home, '.gemini', 'settings.json'),
        own: join(home, '.config', 'switchboard', 'config.json'),
      };
      // Claude Code runs `echo`; Cursor has the same `echo` (shadowed) and a `comand` typo; VS Code
      // needs an editor prompt; Gemini points at this daemon itself.
      await writeJson(files.claude, { mcpServers: { echo } });
      // (`typo`'s env sets it apart from `echo`: the same command and args would be the same connection.)
      await writeJson(files.cursor, { mcpServers: { echo, typo: { comand: process.execPath, args: [fixturePath('echo-stdio')], env: { NAME: 'typo' } } } });
      await writeJson(files.vscode, { servers: { github: { type: 'stdio', command: 'github-mcp', env: { TOKEN: '${input:token}' } } } });
      await writeJson(files.gemini, { mcpServers: { self: { httpUrl: `http://127.0.0.1:${port}/mcp` } } });

      const serve = spawnServe(['--port', String(port)], { home, cwd }, onTestFinished);
      await serve.waitForLog((entry) => entry.msg === 'ready');

      // At start: each kind, with its file and its reason.
      expect(await waitForWarning(serve, 'unknown key "comand"')).toMatchObject({
        path: files.cursor,
        server: 'typo',
        msg: `${files.cursor}: server "typo": unknown key "comand" ignored`,
      });
      expect(await waitForWarning(serve, 'server "typo" is invalid')).toMatchObject({
        path: files.cursor,
        msg: `${files.cursor}: server "typo" is invalid: stdio server needs a "command"`,
      });
      expect(await waitForWarning(serve, '${input:token}')).toMatchObject({
        path: files.vscode,
        server: 'github',
        msg: `${files.vscode}: server "github" is invalid: unresolved placeholder \${input:token} (an editor prompt; a daemon cannot answer it) in env.TOKEN`,
      });
      expect(await waitForWarning(serve, 'server shadowed')).toMatchObject({
        path: files.cursor,
        server: 'echo',
        msg: `server shadowed: "echo" in ${files.cursor} is not started; "echo" from ${files.claude} wins (same name)`,
      });
      expect(await waitForWarning(serve, 'server skipped')).toMatchObject({
        path: files.gemini,
        server: 'self',
        msg: 'server skipped: points at this Switchboard itself',
      });

      // Live: Switchboard's own file appears with an unknown key — the whole file is ignored.
      await writeJson(files.own, { prot: 1 });
      expect(await waitForWarning(serve, 'file ignored')).toMatchObject({
        path: files.own,
        msg: `${files.own}: prot: unknown key (file ignored)`,
      });

      // Fixed, but it now asks for settings that only a restart applies.
      await writeJson(files.own, { port: port + 1, logLevel: 'debug' });
      expect(await waitForWarning(serve, 'next start')).toMatchObject({
        path: files.own,
        msg: `${files.own}: "logLevel", "port" changed; they take effect at the next start (restart Switchboard to apply)`,
      });
      await serve.waitForLog((entry) => entry.level === 30 && entry.msg === `resolved: ${files.own}: prot: unknown key (file ignored)`);

      // The running `echo` breaks: it keeps running on its last good config, and the log says so.
      await writeJson(files.claude, { mcpServers: { echo: { ...echo, env: { KEY: '${input:key}' } } } });
      const kept = await waitForWarning(serve, 'keeps its last good config');
      expect(kept).toMatchObject({ path: files.claude, server: 'echo' });
      const applied = await serve.waitForLog((entry) => entry.msg === 'config applied' && (entry.kept as string[]).length > 0);
      expect(applied).toMatchObject({ kept: ['echo'], added: [], removed: [], changed: [] });

      // The typo is mended: its two warnings are resolved, `typo` connects; nothing else is repeated.
      await writeJson(files.cursor, { mcpServers: { echo, typo: { command: process.execPath, args: [fixturePath('echo-stdio')], env: { NAME: 'typo' } } } });
      const mended = await serve.waitForLog((entry) => entry.msg === 'config applied' && (entry.added as string[]).includes('typo'));
      expect(mended).toMatchObject({ added: ['typo'], kept: ['echo'], unchanged: [] });
      await serve.waitForLog((entry) => entry.level === 30 && entry.msg === `resolved: ${files.cursor}: server "typo" is invalid: stdio server needs a "command"`);

      // Each warning was logged exactly once over the start and all four edits.
      for (const text of [
        'unknown key "comand"',
        'server "typo" is invalid',
        '${input:token}',
        'server shadowed',
        'server skipped',
        'file ignored',
        'next start',
        'keeps its last good config',
        '${input:key}',
      ]) {
        expect(warnings(serve, text), text).toHaveLength(1);
      }
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'starts with a typo in its own file and a broken client file: the bad parts are skipped as a live edit skips them, the rest connects (issue #36 item 2)',
    async ({ expect, onTestFinished }) => {
      const home = await realpath(await tempDir(onTestFinished));
      const cwd = await realpath(await tempDir(onTestFinished));
      const echo = fixtureServerConfig('echo-stdio');
      const own = join(home, '.config', 'switchboard', 'config.json');
      const claude = join(home, '.claude.json');
      const cursor = join(home, '.cursor', 'mcp.json');
      await writeJson(own, { mcpServers: { mine: { ...echo, env: { NAME: 'mine' } }, typo: { comand: 'node' } } });
      await writeJson(claude, { mcpServers: { theirs: { ...echo, env: { NAME: 'theirs' } } } });
      await mkdir(dirname(cursor), { recursive: true });
      await writeFile(cursor, '{\n  "mcpServers": {\n    "half": { "command": node }\n  }\n}\n');

      const serve = spawnServe(['--port', '0'], { home, cwd }, onTestFinished);
      const ready = await serve.waitForLog((entry) => entry.msg === 'ready');
      expect(ready).toMatchObject({ servers: 2, failed: 0 });
      const url = await serve.listening();
      const status = (await (await fetch(`${url}/status`)).json()) as { servers: Array<{ name: string; status: string }> };
      expect(status.servers.map((server) => [server.name, server.status])).toEqual([
        ['mine', 'connected'],
        ['theirs', 'connected'],
      ]);
      expect(await waitForWarning(serve, 'server "typo" is invalid')).toMatchObject({
        path: own,
        server: 'typo',
        msg: `${own}: server "typo" is invalid: comand: unknown key; stdio server needs a "command"`,
      });
      const syntax = await waitForWarning(serve, ': invalid JSON');
      expect(syntax).toMatchObject({ path: cursor, line: 3, column: expect.any(Number) });
      expect(syntax.msg).toMatch(new RegExp(`^${cursor}:3:\\d+: invalid JSONC?: `));

      // The same typo brought in by a live edit gets the same line.
      await writeJson(own, { mcpServers: { mine: { ...echo, env: { NAME: 'mine' } }, typo: { comand: 'node' }, typo2: { comand: 'node' } } });
      expect(await waitForWarning(serve, 'server "typo2" is invalid')).toMatchObject({
        path: own,
        server: 'typo2',
        msg: `${own}: server "typo2" is invalid: comand: unknown key; stdio server needs a "command"`,
      });
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'logs the same mistakes when a live edit brings them in, and nothing again on an edit that changes nothing',
    async ({ expect, onTestFinished }) => {
      const home = await realpath(await tempDir(onTestFinished));
      const cwd = await realpath(await tempDir(onTestFinished));
      const port = await freePort();
      const echo = fixtureServerConfig('echo-stdio');
      const claude = join(home, '.claude.json');
      const cursor = join(home, '.cursor', 'mcp.json');
      const vscode = join(home, '.config', 'Code', 'User', 'mcp.json');
      const gemini = join(home, '.gemini', 'settings.json');
      await writeJson(claude, { mcpServers: { echo } });

      const serve = spawnServe(['--port', String(port)], { home, cwd }, onTestFinished);
      await serve.waitForLog((entry) => entry.msg === 'ready');
      expect(serve.entries().filter(isConfigWarning)).toEqual([]);

      // Three clients' files appear, each with a mistake (the files' directories did not exist yet).
      await writeJson(cursor, { mcpServers: { echo, typo: { comand: 'node', env: { NAME: 'typo' } } } });
      await writeJson(vscode, { servers: { github: { type: 'stdio', command: 'github-mcp', env: { TOKEN: '${input:token}' } } } });
      await writeJson(gemini, { mcpServers: { self: { httpUrl: `http://localhost:${port}/mcp` } } });
      const expected = [
        { path: cursor, server: 'typo', msg: `${cursor}: server "typo": unknown key "comand" ignored` },
        { path: cursor, server: 'typo', msg: `${cursor}: server "typo" is invalid: stdio server needs a "command"` },
        { path: cursor, server: 'echo', msg: `server shadowed: "echo" in ${cursor} is not started; "echo" from ${claude} wins (same name)` },
        { path: vscode, server: 'github', msg: expect.stringContaining('unresolved placeholder ${input:token}') },
        { path: gemini, server: 'self', msg: 'server skipped: points at this Switchboard itself' },
      ];
      for (const line of expected) {
        expect(
          await serve.waitForLog(
            (entry) => isConfigWarning(entry) && entry.path === line.path && entry.server === line.server && (typeof line.msg !== 'string' || entry.msg === line.msg),
          ),
        ).toMatchObject(line);
      }

      // Rewritten as it was (an editor's save without changes), then an unrelated real change: no repeats.
      await writeJson(cursor, { mcpServers: { echo, typo: { comand: 'node', env: { NAME: 'typo' } } } });
      await writeJson(claude, { mcpServers: { echo, echo2: { ...echo, env: { NAME: 'echo2' } } } });
      await serve.waitForLog((entry) => entry.msg === 'config applied' && (entry.added as string[]).includes('echo2'));
      expect(serve.entries().filter(isConfigWarning)).toHaveLength(expected.length);

      // Switchboard's own file runs a server, then gains an unknown key: the whole file is ignored,
      // and the line says which server keeps running on its last good config.
      const own = join(home, '.config', 'switchboard', 'config.json');
      await writeJson(own, { mcpServers: { mine: { ...echo, env: { NAME: 'mine' } } } });
      await serve.waitForLog((entry) => entry.msg === 'config applied' && (entry.added as string[]).includes('mine'));
      await writeJson(own, { mcpServers: { mine: { ...echo, env: { NAME: 'mine' } } }, colour: 'blue' });
      expect(await waitForWarning(serve, 'file ignored')).toMatchObject({ path: own, msg: `${own}: colour: unknown key (file ignored)` });
      expect(await serve.waitForLog((entry) => entry.msg === 'config applied' && (entry.kept as string[]).length > 0)).toMatchObject({
        added: [],
        removed: [],
        changed: [],
        kept: ['mine'],
        unchanged: ['echo', 'echo2'],
      });
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
    },
    SPAWN_TIMEOUT_MS,
  );
});
