import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { describe, it } from 'vitest';
import { migratePostgres } from '../../src/store/pg/pg-migrations.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { freePort } from '../helpers/free-port.js';
import { cutOff, freshDatabaseUrl } from '../helpers/pg-stores.js';
import { tempDir } from '../helpers/process.js';
import { spawnServe } from '../helpers/serve-process.js';

/**
 * Issue #28 item 1, "Bad input", with the real CLI: `serve` on a PostgreSQL store that is
 * unreachable at start, holds a newer schema, or goes away while the daemon runs.
 */

const SPAWN_TIMEOUT_MS = 60_000;
const PASSWORD = 'hunter2-not-for-logs';

/** The URL with a password (the test server trusts any, so it only has to stay out of sight). */
function withPassword(url: string): string {
  const parsed = new URL(url);
  parsed.password = PASSWORD;
  return parsed.toString();
}

/** Switchboard's own config with one stdio server that writes `marker` the moment it is spawned. */
async function configWith(dir: string, settings: Record<string, unknown>): Promise<{ configPath: string; marker: string }> {
  const marker = join(dir, 'spawned.json');
  const configPath = join(dir, 'switchboard.json');
  const echo = fixtureServerConfig('echo-stdio', { env: { PID_FILE: marker } });
  await writeFile(configPath, JSON.stringify({ dbPath: join(dir, 'cache.db'), ...settings, mcpServers: { echo } }));
  return { configPath, marker };
}

// The three tests run side by side, each with its own database, HOME and `serve` (three at
// most), registering their cleanups and asserting through their own context.
describe.concurrent('serve on a PostgreSQL store that cannot be used', () => {
  it(
    'exits 1 naming host:port (never the password) when the database is unreachable, before anything starts',
    async ({ expect, onTestFinished }) => {
      const home = await tempDir(onTestFinished);
      const port = await freePort();
      const { configPath, marker } = await configWith(home, { store: `postgres://switchboard:${PASSWORD}@127.0.0.1:${port}/sb` });

      const serve = spawnServe(['--config', configPath, '--port', '0'], { home, cwd: home }, onTestFinished);
      expect(await serve.exited).toEqual({ code: 1, signal: null });
      expect(serve.stderr()).toBe(`switchboard: cannot use the PostgreSQL store at 127.0.0.1:${port}/sb: connect ECONNREFUSED 127.0.0.1:${port}\n`);
      expect(existsSync(marker)).toBe(false);
      expect(serve.entries().filter((entry) => /listening/.test(entry.msg ?? ''))).toEqual([]);
      expect(serve.lines().join('\n')).not.toContain(PASSWORD);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'refuses a database whose schema is from a newer version, and says why (SWITCHBOARD_DATABASE_URL)',
    async ({ expect, onTestFinished }) => {
      const home = await tempDir(onTestFinished);
      const url = await freshDatabaseUrl(onTestFinished);
      const admin = new pg.Pool({ connectionString: url });
      // Its clients may still be closing when the database is dropped WITH (FORCE) after the test.
      admin.on('error', () => {});
      onTestFinished(() => admin.end());
      await migratePostgres(admin);
      await admin.query("INSERT INTO migrations (id, name, applied_at) VALUES (42, 'from-the-future', 0)");
      const { configPath, marker } = await configWith(home, {});

      const serve = spawnServe(['--config', configPath, '--port', '0'], { home, cwd: home, env: { SWITCHBOARD_DATABASE_URL: withPassword(url) } }, onTestFinished);
      expect(await serve.exited).toEqual({ code: 1, signal: null });
      const { host, port, pathname } = new URL(url);
      expect(serve.stderr()).toBe(
        `switchboard: PostgreSQL store ${host}${port ? '' : ':5432'}${pathname} has a schema from a newer Switchboard ` +
          '(the database has migrations this version does not know (42)); refusing to start. Upgrade this daemon, or point it at another database\n',
      );
      expect(existsSync(marker)).toBe(false);
    },
    SPAWN_TIMEOUT_MS,
  );
});

describe.concurrent('serve on a PostgreSQL store that goes away while running', () => {
  it(
    'keeps serving calls, says so in /status, and clears it when the database returns',
    async ({ expect, onTestFinished }) => {
      const home = await tempDir(onTestFinished);
      const url = await freshDatabaseUrl(onTestFinished);
      const { configPath } = await configWith(home, { store: withPassword(url) });
      const serve = spawnServe(['--config', configPath, '--port', '0'], { home, cwd: home }, onTestFinished);
      const using = await serve.waitForLog((entry) => entry.msg === 'using the PostgreSQL store');
      expect(using.store).toBe(withPassword(url).replace(PASSWORD, '***'));
      const base = await serve.listening();
      await serve.waitForLog((entry) => entry.msg === 'ready');

      const call = async (text: string) => {
        const res = await fetch(`${base}/tools/mcp_echo_echo/call`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ arguments: { text } }),
        });
        return { status: res.status, body: (await res.json()) as { content?: Array<{ text?: string }> } };
      };
      const status = async () => (await (await fetch(`${base}/status`)).json()) as { storeWarnings: string[] };

      expect((await call('before')).status).toBe(200);
      expect((await status()).storeWarnings).toEqual([]);
      // The store is the database: the tool list was cached there, not in the SQLite file.
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        expect((await admin.query("SELECT server FROM tool_cache WHERE server = 'echo'")).rowCount).toBe(1);
      } finally {
        await admin.end();
      }
      expect(existsSync(join(home, 'cache.db'))).toBe(false);

      const outage = await cutOff(url);
      let restored = false;
      onTestFinished(async () => {
        if (!restored) await outage.restore();
      });
      const during = await call('during');
      expect(during.status).toBe(200);
      expect(JSON.stringify(during.body)).toContain('during');
      await expect
        .poll(async () => (await status()).storeWarnings, { timeout: 20_000, interval: 200 })
        .toEqual([expect.stringMatching(/^PostgreSQL store 127\.0\.0\.1:\d+\/t_\w+ unreachable since .*; serving from memory until it returns$/)]);
      expect((await call('still')).status).toBe(200);

      await outage.restore();
      restored = true;
      await expect.poll(async () => (await status()).storeWarnings, { timeout: 20_000, interval: 200 }).toEqual([]);
      expect((await call('after')).status).toBe(200);
      expect(serve.lines().join('\n')).not.toContain(PASSWORD);
      expect(JSON.stringify(await status())).not.toContain(PASSWORD);
      // And it stops cleanly: the pool ends with the daemon.
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toEqual({ code: 0, signal: null });
    },
    SPAWN_TIMEOUT_MS,
  );
});
