import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

/**
 * A real PostgreSQL server for the tests (issue #28), from Debian's `postgresql` package:
 * `initdb` into a temp dir, `postgres` on a random loopback port with trust auth, fsync off
 * (a test cluster is thrown away). `.ci/run` installs the package when it is missing. Run as
 * root (CI), the server runs as the `postgres` user the package creates, since PostgreSQL
 * refuses to run as root.
 */

export interface PostgresServer {
  /** `postgres://switchboard@127.0.0.1:<port>/postgres`: the maintenance database. */
  url: string;
  port: number;
  /** Stops the server (fast shutdown) and removes its directory. */
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL's bin directory; throws with the fix when there is none. */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) {
    throw new Error('PostgreSQL is not installed: `apt-get install -y postgresql` (the tests start their own server from it)');
  }
  return join(root, versions[0]!, 'bin');
}

/** uid/gid to run PostgreSQL as: ourselves, or the package's `postgres` user when we are root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const entry = spawnSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' }).stdout.trim();
  const [, , uid, gid] = entry.split(':');
  if (!uid || !gid) throw new Error('running as root, and there is no `postgres` user to run PostgreSQL as');
  return { uid: Number(uid), gid: Number(gid) };
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBinDir();
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'sb-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  // Not spawnSync: the run's other setup (the fixtures' and the dashboard's bundles) goes on
  // meanwhile; blocked by initdb's ~1 s, it began only once initdb was done.
  await promisify(execFile)(join(bin, 'initdb'), ['-D', data, '-U', 'switchboard', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--locale=C'], { encoding: 'utf8', ...user }).catch(
    (err: { code?: unknown; stderr?: string }) => {
      throw new Error(`initdb failed (${String(err.code)}): ${err.stderr ?? String(err)}`);
    },
  );

  const port = await freePort();
  const server = spawn(
    join(bin, 'postgres'),
    ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
    { stdio: ['ignore', 'ignore', 'pipe'], ...user },
  );
  let log = '';
  server.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    log = (log + chunk).slice(-4000);
  });
  const url = `postgres://switchboard@127.0.0.1:${port}/postgres`;
  await waitForAccepting(url, server, () => log);
  return {
    url,
    port,
    stop: async () => {
      if (server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((resolve) => server.once('exit', resolve));
        server.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForAccepting(url: string, server: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`postgres exited (${server.exitCode}): ${log()}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections in 30 s: ${String(err)}\n${log()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

let counter = 0;
/** Whether the suite's server (one per run) takes `STRATEGY FILE_COPY`: asked once per process. */
let fileCopy: Promise<boolean> | undefined;
/** This worker's maintenance connection to the suite's server, by URL (see adminQuery). */
const admins = new Map<string, Promise<pg.Client>>();

/**
 * A statement on the maintenance database, over one connection per worker: each connection is a
 * PostgreSQL backend process of its own (~25 ms of the server's CPU to start on the CI box), and a
 * connection per create and per drop made ~120 of them a run. The client queues statements, so
 * creates and drops from concurrent tests take turns. A connection that fails or ends (the server
 * stopping at the run's end) is forgotten, and the next statement opens another.
 */
export async function adminQuery<R extends pg.QueryResultRow>(serverUrl: string, sql: string): Promise<pg.QueryResult<R>> {
  let admin = admins.get(serverUrl);
  if (admin === undefined) {
    const client = new pg.Client({ connectionString: serverUrl });
    const forget = () => {
      if (admins.get(serverUrl) === admin) admins.delete(serverUrl);
    };
    client.on('error', forget);
    client.on('end', forget);
    admin = client.connect().then(() => {
      // Never what keeps a worker from exiting: its tests are done by then.
      (client as unknown as { connection: { stream: { unref(): void } } }).connection.stream.unref();
      return client;
    });
    admin.catch(forget);
    admins.set(serverUrl, admin);
  }
  return (await admin).query<R>(sql);
}

/**
 * A database of its own on the suite's server (started by test/global-setup.ts): the URL to it.
 * Dropped when `drop` is called; a test uses onTestFinished for that.
 */
export async function createDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `t_${process.pid}_${Date.now().toString(36)}_${(counter += 1)}`;
  // FILE_COPY: the template's files copied as files (on tmpfs, test/helpers/run-tmpdir.ts) rather
  // than block by block through the WAL, PostgreSQL 15's default. Measured on the CI box, a
  // create, a first connection and a drop: ~110 ms of the server's CPU instead of ~160. Before
  // 15 there was no choice, and file copy was the only way.
  fileCopy ??= adminQuery<{ server_version_num: string }>(serverUrl, 'SHOW server_version_num').then(
    (r) => Number(r.rows[0]?.server_version_num) >= 150000,
    (err: unknown) => {
      fileCopy = undefined; // asked again by the next create
      throw err;
    },
  );
  await adminQuery(serverUrl, `CREATE DATABASE ${name}${(await fileCopy) ? ' STRATEGY FILE_COPY' : ''}`);
  const url = serverUrl.replace(/\/postgres$/, `/${name}`);
  return { url, drop: async () => void (await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) };
}
