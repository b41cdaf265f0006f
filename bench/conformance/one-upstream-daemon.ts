import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaemonConfigSchema } from '../../src/config/schema.js';
import type { ServerConfig } from '../../src/config/types.js';
import { createDaemon, type Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/logger.js';

/**
 * A real Switchboard daemon (not listening yet) whose discovery gives exactly one upstream,
 * `name` → `upstream`, with its database and home in a fresh temp directory (`dir`, the caller's
 * to remove). Used by both conformance drivers.
 */
export async function oneUpstreamDaemon(name: string, upstream: ServerConfig): Promise<{ daemon: Daemon; dir: string; host: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-conformance-'));
  const config = DaemonConfigSchema.parse({ host: '127.0.0.1', port: 0, dbPath: join(dir, 'switchboard.db'), logLevel: 'warn' });
  const daemon = createDaemon(config, {
    logger: createLogger({ level: 'warn', destination: process.stderr }),
    discover: async () => ({
      configs: { [name]: upstream },
      sources: { [name]: { provider: 'conformance', providerName: 'Conformance', path: '', level: 'native' } },
      shadowed: [],
      skipped: [],
      warnings: [],
      exaApiKeys: [],
    }),
    cwd: dir,
    home: dir,
    env: {},
  });
  return { daemon, dir, host: config.host };
}
