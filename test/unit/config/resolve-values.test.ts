import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createValueResolver } from '../../../src/config/resolve-values.js';
import type { ServerSource } from '../../../src/config/types.js';
import { isProcessGone } from '../../helpers/process.js';
import { makeTree } from './temp-tree.js';

const user: ServerSource = { provider: 'claude-code', providerName: 'Claude Code', path: '/h/.claude.json', level: 'user' };
const project: ServerSource = { provider: 'project', providerName: 'Project', path: '/p/.mcp.json', level: 'project' };

/** Collects what the resolver logs, to prove secrets never reach it. */
function captureLogger() {
  const lines: string[] = [];
  return { lines, logger: { warn: (obj: object, msg: string) => lines.push(`${JSON.stringify(obj)} ${msg}`) } };
}

async function linesOf(path: string): Promise<string[]> {
  try {
    return (await readFile(path, 'utf8')).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

describe('createValueResolver', () => {
  it('replaces a !cmd env or header value with the trimmed stdout, on a copy', async () => {
    const resolver = createValueResolver({});
    const config = {
      command: 'srv',
      env: { PLAIN: 'kept', SECRET: '!printf "  s3cret \\n"' },
      headers: { Authorization: '!echo Bearer abc' },
    };
    const result = await resolver.resolve('srv', config, user);
    expect(result.config.env).toEqual({ PLAIN: 'kept', SECRET: 's3cret' });
    expect(result.config.headers).toEqual({ Authorization: 'Bearer abc' });
    expect(result.dropped).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(config.env.SECRET).toBe('!printf "  s3cret \\n"');
  });

  it('drops an entry whose command exits non-zero, naming server and key but never value or output', async () => {
    const { lines, logger } = captureLogger();
    const resolver = createValueResolver({ logger });
    const result = await resolver.resolve('db', { command: 'db', env: { PASSWORD: '!echo LEAKED-OUTPUT; echo LEAKED-STDERR >&2; exit 3', OTHER: 'x' } }, user);
    expect(result.config.env).toEqual({ OTHER: 'x' });
    expect(result.dropped).toEqual(['env.PASSWORD']);
    expect(result.warnings).toEqual(['server "db": "env.PASSWORD" dropped: command exited with code 3']);
    const everything = [...result.warnings, ...lines].join('\n');
    expect(everything).not.toMatch(/LEAKED|echo/);
    expect(lines).toHaveLength(1);
  });

  it('drops an entry whose command prints nothing', async () => {
    const resolver = createValueResolver({});
    const result = await resolver.resolve('s', { command: 's', env: { K: '!printf "  \\n"' } }, user);
    expect(result.config.env).toEqual({});
    expect(result.warnings).toEqual(['server "s": "env.K" dropped: command printed nothing']);
  });

  it('kills a command at its deadline and drops the entry', async () => {
    const resolver = createValueResolver({ commandTimeoutMs: 200 });
    const pidFile = join((await makeTree()).root, 'command.pid');
    // Ten minutes, far past the test's timeout: the answer cannot be the command ending by itself.
    const result = await resolver.resolve('slow', { url: 'https://e/mcp', headers: { H: `!echo $$ > ${pidFile}; exec sleep 600; echo late` } }, user);
    // Killed, not left running: gone by the time the answer came.
    expect(isProcessGone(Number((await readFile(pidFile, 'utf8')).trim()))).toBe(true);
    expect(result.config.headers).toEqual({});
    expect(result.dropped).toEqual(['headers.H']);
    expect(result.warnings).toEqual(['server "slow": "headers.H" dropped: command timed out']);
  });

  it('runs identical commands in flight once, and caches a success', async () => {
    const t = await makeTree();
    const log = join(t.root, 'runs.log');
    const command = `!echo run >> '${log}'; echo value`;
    const resolver = createValueResolver({});
    const [a, b] = await Promise.all([
      resolver.resolve('a', { command: 'a', env: { K: command } }, user),
      resolver.resolve('b', { command: 'b', headers: { K: command }, url: 'https://b' }, user),
    ]);
    expect(a.config.env).toEqual({ K: 'value' });
    expect(b.config.headers).toEqual({ K: 'value' });
    expect(await linesOf(log)).toEqual(['run']);

    const again = await resolver.resolve('c', { command: 'c', env: { K: command } }, user);
    expect(again.config.env).toEqual({ K: 'value' });
    expect(await linesOf(log)).toEqual(['run']);
  });

  it('retries a failed command on the next resolve instead of caching the failure', async () => {
    const t = await makeTree();
    const log = join(t.root, 'runs.log');
    const resolver = createValueResolver({});
    const config = { command: 'x', env: { K: `!echo run >> '${log}'; exit 1` } };
    await resolver.resolve('x', config, user);
    await resolver.resolve('x', config, user);
    expect(await linesOf(log)).toEqual(['run', 'run']);
  });

  it('refuses !cmd from project-level files unless trustProjectCommands', async () => {
    const t = await makeTree();
    const marker = join(t.root, 'ran');
    const config = { command: 'x', env: { K: `!echo yes > '${marker}'; echo v` } };

    const refused = await createValueResolver({}).resolve('x', config, project);
    expect(refused.config.env).toEqual({});
    expect(refused.dropped).toEqual(['env.K']);
    expect(refused.warnings).toEqual(['server "x": "env.K" not resolved: commands from project-level files need trustProjectCommands']);
    expect(await linesOf(marker)).toEqual([]);

    const trusted = await createValueResolver({ trustProjectCommands: true }).resolve('x', config, project);
    expect(trusted.config.env).toEqual({ K: 'v' });
    expect(await linesOf(marker)).toEqual(['yes']);
  });

  it('resolves ${cmd: …} anywhere in an env or header value, with the !cmd trust rule and drop on failure', async () => {
    const t = await makeTree();
    const marker = join(t.root, 'ran');
    const { lines, logger } = captureLogger();
    const resolver = createValueResolver({ logger });
    const result = await resolver.resolve(
      'hub',
      {
        url: 'https://hub/mcp',
        headers: { Authorization: 'Bearer ${cmd: printf tok}', 'X-Pair': '${cmd:echo a}-${cmd: echo b}' },
        env: { BAD: 'x${cmd: echo LEAKED; exit 4}' },
      },
      user,
    );
    expect(result.config.headers).toEqual({ Authorization: 'Bearer tok', 'X-Pair': 'a-b' });
    expect(result.config.env).toEqual({});
    expect(result.warnings).toEqual(['server "hub": "env.BAD" dropped: command exited with code 4']);
    expect(lines.join('\n')).not.toMatch(/LEAKED|tok/);

    const config = { command: 'x', env: { K: `\${cmd: echo yes > '${marker}'; echo v}` } };
    const refused = await createValueResolver({}).resolve('x', config, project);
    expect(refused.dropped).toEqual(['env.K']);
    expect(await linesOf(marker)).toEqual([]);
  });

  it('injects stored credentials as a bearer header or OAUTH_ACCESS_TOKEN, never over an explicit one', async () => {
    const resolver = createValueResolver({ credentials: { injectCredentials: (name) => (name === 'none' ? undefined : `tok-${name}`) } });
    expect((await resolver.resolve('h', { url: 'https://h/mcp' }, user)).config.headers).toEqual({ Authorization: 'Bearer tok-h' });
    expect((await resolver.resolve('s', { type: 'sse', url: 'https://s/sse' }, user)).config.headers).toEqual({
      Authorization: 'Bearer tok-s',
    });
    expect((await resolver.resolve('io', { command: 'x' }, user)).config.env).toEqual({ OAUTH_ACCESS_TOKEN: 'tok-io' });
    expect((await resolver.resolve('own', { url: 'https://o', headers: { authorization: 'mine' } }, user)).config.headers).toEqual({
      authorization: 'mine',
    });
    expect((await resolver.resolve('none', { url: 'https://n' }, user)).config.headers).toBeUndefined();
  });
});
