import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, onTestFinished } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import { createDatabase } from './postgres-server.js';
import { tempDir } from './process.js';
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
  /** A request to this replica with the operator's key. */
  json<T>(path: string, init?: { method?: string; body?: unknown; key?: string }): Promise<{ status: number; body: T }>;
}

export async function replicaCluster(servers: Record<string, ServerConfig>): Promise<{ start(options?: { port?: number }): Promise<Replica> }> {
  const db = await createDatabase(inject('postgresUrl'));
  onTestFinished(() => db.drop());
  const dir = await tempDir();
  let n = 0;
  return {
    /** `port`: a fixed one (a replica restarted behind a balancer keeps its address). @default any free port */
    async start(options: { port?: number } = {}) {
      n += 1;
      // Each replica its own files (as on its own machine); only the database is shared.
      const own = join(dir, `r${n}`);
      const configPath = `${own}.json`;
      await writeFile(configPath, JSON.stringify({ store: db.url, token: TOKEN, dbPath: join(own, 'unused.db'), mcpServers: servers }));
      const serve = spawnServe(['--config', configPath, '--port', String(options.port ?? 0)], { home: dir, cwd: dir });
      const url = await serve.listening();
      const ready = await serve.waitForLog((e) => e.msg === 'ready');
      const json = async <T>(path: string, init: { method?: string; body?: unknown; key?: string } = {}) => {
        const res = await fetch(new URL(path, url), {
          method: init.method ?? 'GET',
          headers: { authorization: `Bearer ${init.key ?? TOKEN}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        });
        return { status: res.status, body: (await res.json()) as T };
      };
      return { serve, url, ready, json };
    },
  };
}

