import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SecretValues } from '../../../../src/config/secret-values.js';
import type { DaemonEvent } from '../../../../src/events/daemon-events.js';
import { AuditLog, FLUSH_BATCH, MAX_AUDITED_ARGUMENTS, FLUSH_DELAY_MS, TRIM_INTERVAL_MS, type AuditSettings } from '../../../../src/gateway/audit/audit-log.js';
import { SqliteAuditStore } from '../../../../src/store/audit-store.js';
import { applyMigrations } from '../../../../src/store/migrations.js';
import type { AuditEntry } from '../../../../src/store/ports.js';
import { ManualClock } from '../../../helpers/manual-clock.js';

/**
 * Issue #22 item 4: the audit log's queue, batches and retention, over the real SQLite store on
 * an in-memory database and a manual clock.
 */

const DAY = 24 * 60 * 60 * 1000;

function setup(settings: Partial<AuditSettings> = {}, secrets?: SecretValues) {
  const db = new Database(':memory:');
  onTestFinished(() => {
    db.close();
  });
  applyMigrations(db);
  const store = new SqliteAuditStore(db);
  const clock = new ManualClock(Date.UTC(2026, 0, 31));
  const events: DaemonEvent[] = [];
  const log = new AuditLog({ store, clock, settings, publish: (event) => void events.push(event), ...(secrets ? { secrets } : {}) });
  onTestFinished(() => log.close());
  const count = (): number => db.prepare('SELECT count(*) FROM audit_log').pluck().get() as number;
  return { db, store, clock, log, events, count };
}

const entry = (ts: number, name = 'mcp_echo_echo'): AuditEntry => ({
  ts,
  transport: 'rest',
  server: 'echo',
  kind: 'tools/call',
  name,
  outcome: 'ok',
  durationMs: 1,
  argBytes: 0,
  resultBytes: 0,
});

describe('AuditLog batching', () => {
  it('writes queued entries in one batch after the delay, at the size threshold, before a query and on close', async () => {
    const { log, clock, count } = setup();
    log.record(entry(clock.now()));
    log.record(entry(clock.now()));
    expect(count()).toBe(0);
    clock.advance(FLUSH_DELAY_MS);
    expect(count()).toBe(2);

    for (let i = 0; i < FLUSH_BATCH; i++) log.record(entry(clock.now()));
    expect(count()).toBe(2 + FLUSH_BATCH);

    log.record(entry(clock.now(), 'queued'));
    expect((await log.query({ limit: 1 }))[0]).toMatchObject({ name: 'queued' });

    log.record(entry(clock.now(), 'last'));
    await log.close();
    expect(count()).toBe(4 + FLUSH_BATCH);
    // Closed: nothing more is taken.
    log.record(entry(clock.now(), 'late'));
    expect(count()).toBe(4 + FLUSH_BATCH);
  });

  it('sizes a request, masks secret values in the arguments it keeps, and publishes call.finished without values', async () => {
    const secrets = new SecretValues(['operator-token-1']);
    secrets.remember('echo', { command: 'x', env: { API_KEY: 'sk-123456789', DEBUG: '1' }, headers: { Authorization: 'Bearer abcdef123456' } });
    const { log, events, clock } = setup({ arguments: true }, secrets);
    const args = { text: 'sk-123456789 abcdef123456 operator-token-1 1' };
    log.recordRequest({ transport: 'mcp', server: 'echo', kind: 'tools/call', name: 'mcp_echo_echo', outcome: 'ok', durationMs: 12.34567, args, result: { content: [] } });
    const [row] = await log.query({ limit: 1 });
    expect(row).toMatchObject({
      ts: clock.now() - 12,
      durationMs: 12.346,
      argBytes: Buffer.byteLength(JSON.stringify(args)),
      resultBytes: Buffer.byteLength('{"content":[]}'),
      arguments: JSON.stringify({ text: '**** **** **** 1' }),
    });
    expect(events).toEqual([
      {
        type: 'call.finished',
        transport: 'mcp',
        server: 'echo',
        kind: 'tools/call',
        name: 'mcp_echo_echo',
        outcome: 'ok',
        durationMs: 12.346,
        argBytes: row!.argBytes,
        resultBytes: row!.resultBytes,
      },
    ]);
  });

  it('masks anything shaped like an agent or operator key, and cuts argument text at the limit', async () => {
    const { log } = setup({ arguments: true }, new SecretValues([]));
    const agentKey = `sbk_0123456789abcdef_${'A'.repeat(43)}`;
    const operatorKey = `sbo_${'b'.repeat(43)}`;
    log.recordRequest({ transport: 'rest', server: 'echo', kind: 'tools/call', name: 't', outcome: 'ok', durationMs: 1, args: { text: `${agentKey} and ${operatorKey}` } });
    const big = { text: 'x'.repeat(MAX_AUDITED_ARGUMENTS * 2) };
    log.recordRequest({ transport: 'rest', server: 'echo', kind: 'tools/call', name: 'big', outcome: 'ok', durationMs: 1, args: big });
    const rows = await log.query({ limit: 2 });
    const byName = new Map(rows.map((row) => [row.name, row]));
    expect(byName.get('t')!.arguments).toBe(JSON.stringify({ text: '**** and ****' }));
    expect(byName.get('big')!.argBytes).toBe(Buffer.byteLength(JSON.stringify(big)));
    expect(byName.get('big')!.arguments!.length).toBeLessThan(MAX_AUDITED_ARGUMENTS + 20);
    expect(byName.get('big')!.arguments!.endsWith('…[truncated]')).toBe(true);
  });

  it('keeps no argument values by default', async () => {
    const { log } = setup();
    log.recordRequest({ transport: 'rest', server: 'echo', kind: 'tools/call', name: 't', outcome: 'ok', durationMs: 1, args: { text: 'hi' } });
    const [row] = await log.query({ limit: 1 });
    expect(row!.argBytes).toBe(13);
    expect(row).not.toHaveProperty('arguments');
  });
});

describe('AuditLog retention', () => {
  it('trims entries older than audit.days on start, then every interval', async () => {
    const { log, store, clock } = setup({ days: 7 });
    await store.append([entry(clock.now() - 8 * DAY, 'old'), entry(clock.now() - 6 * DAY, 'recent'), entry(clock.now(), 'new')]);
    expect(await log.start()).toBe(1);
    expect((await log.query({ limit: 10 })).map((row) => row.name)).toEqual(['new', 'recent']);

    // The periodic trims keep "recent" while it is younger than seven days…
    clock.advance(DAY - TRIM_INTERVAL_MS);
    expect((await log.query({ limit: 10 })).map((row) => row.name)).toEqual(['new', 'recent']);
    // …and take it at the first interval after.
    clock.advance(2 * TRIM_INTERVAL_MS);
    expect((await log.query({ limit: 10 })).map((row) => row.name)).toEqual(['new']);
  });

  it('keeps only the newest audit.maxRows entries', async () => {
    const { log, clock } = setup({ maxRows: 3 });
    for (let i = 0; i < 5; i++) log.record(entry(clock.now(), `call-${i}`));
    expect(await log.trim()).toBe(2);
    expect((await log.query({ limit: 10 })).map((row) => row.name)).toEqual(['call-4', 'call-3', 'call-2']);
  });
});

describe('SqliteAuditStore queries', () => {
  it('filters by agent, server, name, outcome and since, newest first, up to the limit', async () => {
    const { store } = setup();
    await store.append([
      { ...entry(1000, 'a'), agent: 'ci' },
      { ...entry(2000, 'b'), server: 'other', outcome: 'error', code: 'UPSTREAM_ERROR' },
      { ...entry(3000, 'c'), agent: 'ci' },
    ]);
    const names = async (query: Parameters<typeof store.query>[0]) => (await store.query(query)).map((row) => row.name);
    expect(await names({ limit: 10 })).toEqual(['c', 'b', 'a']);
    expect(await names({ limit: 10, agent: 'ci' })).toEqual(['c', 'a']);
    expect(await names({ limit: 10, server: 'other' })).toEqual(['b']);
    expect(await names({ limit: 10, name: 'a' })).toEqual(['a']);
    expect(await names({ limit: 10, outcome: 'error' })).toEqual(['b']);
    expect(await names({ limit: 10, since: 2000 })).toEqual(['c', 'b']);
    expect(await names({ limit: 1 })).toEqual(['c']);
    expect((await store.query({ limit: 10, outcome: 'error' }))[0]).toMatchObject({ code: 'UPSTREAM_ERROR' });
  });
});
