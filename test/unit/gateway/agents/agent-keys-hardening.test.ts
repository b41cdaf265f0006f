import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../../../../src/cli/client/command.js';
import { expiryOf } from '../../../../src/gateway/agents/agent-keys.js';
import { AgentRegistry } from '../../../../src/gateway/agents/agent-registry.js';
import { localOperatorKey, OPERATOR_KEY_FILE } from '../../../../src/gateway/agents/operator-key.js';
import { MemoryAgentStore } from '../../../../src/store/agent-store.js';
import { tempDir } from '../../../helpers/process.js';

/** Issue #22 review fixes around keys: each case failed before its fix. */

const quiet = { warn() {}, error() {}, info() {} };

describe('agent key hardening', () => {
  it('a date-only expiresAt lasts to the end of that day (UTC)', () => {
    expect(expiryOf('2027-06-30')).toBe(Date.UTC(2027, 6, 1));
    expect(expiryOf('2027-06-30T12:00:00Z')).toBe(Date.UTC(2027, 5, 30, 12));
  });

  it('adding an agent under a name whose keys were never revoked does not bring those keys back', async () => {
    const store = new MemoryAgentStore();
    const clock = { now: () => Date.UTC(2026, 0, 1) };
    const withConfig = new AgentRegistry({ config: { ops: {} }, store, token: 'operator-token-123456', clock, logger: quiet });
    await withConfig.loaded;
    const { key: old } = await withConfig.rotate('ops');
    expect(withConfig.authenticate(old).kind).toBe('agent');

    // The config entry is gone: its issued key is refused...
    const without = new AgentRegistry({ config: {}, store, token: 'operator-token-123456', clock, logger: quiet });
    await without.loaded;
    expect(without.authenticate(old).kind).toBe('revoked');
    // ...and stays refused once an agent of that name is added again.
    const { key: fresh } = await without.add('ops', { servers: ['*'] });
    expect(without.authenticate(fresh).kind).toBe('agent');
    expect(without.authenticate(old).kind).toBe('revoked');
  });

  it('keys stay required when a daemon that had agents can no longer read them (fail closed)', async () => {
    const dir = await tempDir();
    const operatorKeyPath = join(dir, OPERATOR_KEY_FILE);
    const clock = { now: () => Date.UTC(2026, 0, 1) };
    const first = new AgentRegistry({ config: {}, store: new MemoryAgentStore(), operatorKeyPath, clock, logger: quiet });
    await first.loaded;
    expect(first.keysRequired).toBe(false);
    await first.add('ci', {});
    expect(first.keysRequired).toBe(true);
    // The next run finds no agent records (say the database opened read-only): still keys.
    const next = new AgentRegistry({ config: {}, store: new MemoryAgentStore(), operatorKeyPath, clock, logger: quiet });
    await next.loaded;
    expect(next.keysRequired).toBe(true);
  });

  it('the CLI reads the local operator key only from a 0600 file of its own, and sends it only to a loopback daemon', async () => {
    const home = await tempDir();
    const dir = join(home, '.local', 'state', 'switchboard');
    await mkdir(dir, { recursive: true });
    const path = join(dir, OPERATOR_KEY_FILE);
    const env = { HOME: home };
    await writeFile(path, 'sbo_from-the-file\n', { mode: 0o644 });
    await chmod(path, 0o644);
    expect(localOperatorKey(env, home)).toBeUndefined();
    await chmod(path, 0o600);
    expect(localOperatorKey(env, home)).toBe('sbo_from-the-file');

    const seen: Array<string | null> = [];
    const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      seen.push(new Headers(init?.headers).get('authorization'));
      return new Response('{"state":"ready"}', { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const io = { env, fetch, stdout: process.stdout, stderr: process.stderr } as unknown as Parameters<typeof clientFor>[1];
    await clientFor({ url: 'http://127.0.0.1:9' }, io)
      .request('GET', '/status')
      .catch(() => undefined);
    await clientFor({ url: 'http://example.test:9' }, io)
      .request('GET', '/status')
      .catch(() => undefined);
    expect(seen).toEqual(['Bearer sbo_from-the-file', null]);
  });
});
