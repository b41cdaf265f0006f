import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, onTestFinished } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import { createDatabase } from './postgres-server.js';
import { tempDir, type Cleanup } from './process.js';
import { spawnServe, type LogEntry, type ServeProcess } from './serve-process.js';

/**
 * Replicas as an operator runs them (issue #28): `switchboard serve` processes with the same
 * servers and operator token on one fresh database of the suite's PostgreSQL server, each with
 * its own files. `start()` resolves once the replica is ready.
 */

export const TOKEN = 'operator-secret-for-replicas';

export interface Replica {
  serve: ServeProcess;
  url: string;
  ready: LogEntry;
  /** The folder of this replica's own files (its `dbPath`'s, where a daemon without a token keeps `operator.key`). */
  dir: string;
  /** A request to this replica with the operator's key. */
  json<T>(path: string, init?: { method?: string; body?: unknown; key?: string }): Promise<{ status: number; body: T }>;
}

export interface ReplicaClusterOptions {
  /** The operator token every replica is configured with; `null` for none (the cluster's own key then). @default TOKEN */
  token?: string | null;
  /** More of the config file every replica reads (e.g. `agents`). @default none */
  config?: Record<string, unknown>;
  /**
   * Where the database's drop, the files and the processes are cleaned up: a concurrent test's own
   * `onTestFinished`. @default vitest's `onTestFinished`
   */
  cleanup?: Cleanup;
}

export interface ReplicaStartOptions {
  /** This replica's servers instead of the cluster's. */
  servers?: Record<string, ServerConfig>;
  /** A fixed port (a replica restarted behind a balancer keeps its address). @default any free port */
  port?: number;
}

export async function replicaCluster(
  servers: Record<string, ServerConfig>,
  options: ReplicaClusterOptions = {},
): Promise<{ start(options?: ReplicaStartOptions): Promise<Replica>; dbUrl: string }> {
  const token = options.token === undefined ? TOKEN : options.token;
  const cleanup = options.cleanup ?? onTestFinished;
  const db = await createDatabase(inject('postgresUrl'));
  cleanup(() => db.drop());
  const dir = await tempDir(cleanup);
  let n = 0;
  return {
    dbUrl: db.url,
    async start(startOptions: ReplicaStartOptions = {}) {
      n += 1;
      // Each replica its own files (as on its own machine); only the database is shared.
      const own = join(dir, `r${n}`);
      const configPath = `${own}.json`;
      await writeFile(
        configPath,
        JSON.stringify({ ...options.config, store: db.url, ...(token !== null ? { token } : {}), dbPath: join(own, 'unused.db'), mcpServers: startOptions.servers ?? servers }),
      );
      const serve = spawnServe(['--config', configPath, '--port', String(startOptions.port ?? 0)], { home: dir, cwd: dir }, cleanup);
      const url = await serve.listening();
      const ready = await serve.waitForLog((e) => e.msg === 'ready');
      const json = async <T>(path: string, init: { method?: string; body?: unknown; key?: string } = {}) => {
        const res = await fetch(new URL(path, url), {
          method: init.method ?? 'GET',
          headers: { ...((init.key ?? token) ? { authorization: `Bearer ${init.key ?? token}` } : {}), ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        });
        return { status: res.status, body: (await res.json()) as T };
      };
      return { serve, url, ready, dir: own, json };
    },
  };
}
