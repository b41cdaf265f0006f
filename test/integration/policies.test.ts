import { ProtocolError, type CallToolResult } from '@modelcontextprotocol/client';
import { realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { addAgentKey, AGENT_ERAS, agentClient, OPERATOR_TOKEN } from '../helpers/agents.js';
import { textOf } from '../helpers/connect.js';
import { nextDaemonEvent, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/process.js';

/**
 * Issue #40 items 1 and 2: argument policies in CEL on one real daemon with the `policy-target`
 * fixture (`db`), judged the same on REST, on `/mcp` in both eras and inside a code-mode script;
 * an `approve` rule holds only the calls it matches; a shadow rule refuses nothing and
 * `GET /policies/impact` counts exactly what it would have refused, per agent.
 */

const POLICIES = [
  // Shadow first: it is evaluated on the way to the rule that decides, and never decides itself.
  { name: 'refund-cap-trial', mode: 'shadow', match: { tools: ['refund'] }, when: 'args.amount > 10', effect: 'deny', reason: 'refunds above 10 would need a ticket' },
  { name: 'bad-eval', match: { agents: ['broken'] }, when: 'args.missing == 1', effect: 'deny' },
  { name: 'sql-select', match: { servers: ['db'], tools: ['query'] }, when: 'args.sql.startsWith("SELECT")', effect: 'allow' },
  { name: 'sql-read-only', match: { tools: ['query'] }, effect: 'deny', reason: 'only SELECT statements may run' },
  {
    name: 'reports-only',
    match: { tools: ['mcp_db_write_file'] },
    when: '!args.path.startsWith("/srv/reports/")',
    effect: 'deny',
    reason: 'files may be written only under /srv/reports',
  },
  { name: 'big-refunds', match: { tools: ['refund'] }, when: 'args.amount > 100', effect: 'approve', reason: 'refunds above 100 need a human' },
  { name: 'no-salaries', match: { tools: ['summary'] }, when: 'args.topic == "salaries"', effect: 'deny', reason: 'not a topic for agents' },
  { name: 'no-etc', when: 'request.method == "resources/read" && args.uri.startsWith("files:///etc/")', effect: 'deny', reason: 'system files are off limits' },
];

let d: TestDaemon;
let agent: string;

beforeAll(async () => {
  d = await startDaemon({
    servers: { db: fixtureServerConfig('policy-target') },
    config: { token: OPERATOR_TOKEN, health: false, codeMode: true, policies: POLICIES as never },
    lifetime: 'manual',
  });
  agent = await addAgentKey(d, { name: 'analyst' });
});
afterAll(() => d.close());

interface ErrorBody {
  error: { code: string; message: string };
}

function rest(key: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${d.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const call = (key: string, tool: string, args: Record<string, unknown>): Promise<Response> => rest(key, `/tools/mcp_db_${tool}/call`, { arguments: args });

describe('argument policies on REST', () => {
  it('args.sql.startsWith("SELECT") lets a read through and denies an UPDATE with the rule and its reason, never the arguments', async () => {
    const read = await call(agent, 'query', { sql: 'SELECT * FROM orders' });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ content: [{ type: 'text', text: 'ran SELECT * FROM orders' }] });

    const update = await call(agent, 'query', { sql: 'UPDATE orders SET paid = 1' });
    expect(update.status).toBe(403);
    const { error } = (await update.json()) as ErrorBody;
    expect(error).toEqual({ code: 'POLICY_DENIED', message: 'Policy "sql-read-only" refused the call: only SELECT statements may run' });
    expect(error.message).not.toContain('UPDATE');
  });

  it('a path rule on a write tool: under /srv/reports it runs, elsewhere it is refused', async () => {
    const inside = await call(agent, 'write_file', { path: '/srv/reports/q1.txt', content: 'ok' });
    expect(await inside.json()).toEqual({ content: [{ type: 'text', text: 'wrote /srv/reports/q1.txt' }] });
    const outside = await call(agent, 'write_file', { path: '/etc/passwd', content: 'x' });
    expect(outside.status).toBe(403);
    expect(((await outside.json()) as ErrorBody).error.message).toBe('Policy "reports-only" refused the call: files may be written only under /srv/reports');
  });

  it('prompt gets and resource reads are judged too', async () => {
    expect((await rest(agent, '/prompts/mcp_db_summary/get', { arguments: { topic: 'sales' } })).status).toBe(200);
    const prompt = await rest(agent, '/prompts/mcp_db_summary/get', { arguments: { topic: 'salaries' } });
    expect(prompt.status).toBe(403);
    expect(((await prompt.json()) as ErrorBody).error.message).toBe('Policy "no-salaries" refused the prompt get: not a topic for agents');

    expect((await rest(agent, `/resources/read?uri=${encodeURIComponent('files:///srv/reports/q1.txt')}`)).status).toBe(200);
    const etc = await rest(agent, `/resources/read?uri=${encodeURIComponent('files:///etc/hosts')}`);
    expect(etc.status).toBe(403);
    expect(((await etc.json()) as ErrorBody).error.code).toBe('POLICY_DENIED');
  });

  it('an approve rule holds only the calls it matches, and the approval names the rule', async () => {
    const small = await call(agent, 'refund', { amount: 50 });
    expect(await small.json()).toEqual({ content: [{ type: 'text', text: 'refunded 50' }] });
    expect((await d.json<{ approvals: unknown[] }>('/approvals')).body.approvals).toEqual([]);

    const requested = nextDaemonEvent(d.daemon, 'approval.requested');
    const big = call(agent, 'refund', { amount: 500 });
    expect(await requested).toMatchObject({ name: 'mcp_db_refund', agent: 'analyst', rule: 'big-refunds', mode: 'held' });
    const [pending] = (await d.json<{ approvals: Array<{ id: string; rule?: string }> }>('/approvals')).body.approvals;
    expect(pending?.rule).toBe('big-refunds');
    await d.json(`/approvals/${pending!.id}/approve`, { method: 'POST' });
    expect(await (await big).json()).toEqual({ content: [{ type: 'text', text: 'refunded 500' }] });
  });

  it('a rule whose when fails to evaluate denies (fail closed), is counted in /metrics, and its error is not told', async () => {
    const broken = await addAgentKey(d, { name: 'broken' });
    const res = await call(broken, 'query', { sql: 'SELECT 1' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as ErrorBody).error.message).toBe('Policy "bad-eval" refused the call: the rule could not be evaluated (denied by policy)');
    const metrics = await (await d.fetch('/metrics')).text();
    expect(metrics).toContain('switchboard_policy_evaluation_errors_total{rule="bad-eval"} 1');
    expect(metrics).toMatch(/switchboard_policy_denials_total\{rule="sql-read-only"\} [1-9]/);
  });

  it('denials are audited as denied with POLICY_DENIED', async () => {
    const denied = await d.json<{ entries: Array<{ name: string; outcome: string; code?: string }> }>('/audit?agent=analyst&tool=mcp_db_query&outcome=denied');
    expect(denied.body.entries[0]).toMatchObject({ name: 'mcp_db_query', outcome: 'denied', code: 'POLICY_DENIED' });
  });
});

describe('argument policies on /mcp', () => {
  it.each(AGENT_ERAS)('the same rules answer a %s client: a read runs, an UPDATE is an isError result with POLICY_DENIED', async (_era, mode) => {
    const client = await agentClient(d, agent, mode);
    const read = (await client.callTool({ name: 'mcp_db_query', arguments: { sql: 'SELECT 2' } })) as CallToolResult;
    expect(textOf(read)).toBe('ran SELECT 2');
    const update = (await client.callTool({ name: 'mcp_db_query', arguments: { sql: 'DELETE FROM orders' } })) as CallToolResult;
    expect(update.isError).toBe(true);
    expect(textOf(update)).toContain('Policy "sql-read-only" refused the call: only SELECT statements may run');
    expect(update._meta?.['switchboard/error']).toMatchObject({ code: 'POLICY_DENIED' });
    const write = (await client.callTool({ name: 'mcp_db_write_file', arguments: { path: '/tmp/x', content: '' } })) as CallToolResult;
    expect(write.isError).toBe(true);
    const prompt = await client.getPrompt({ name: 'mcp_db_summary', arguments: { topic: 'salaries' } }).catch((err: unknown) => err);
    expect(prompt).toBeInstanceOf(ProtocolError);
    expect((prompt as ProtocolError).data).toMatchObject({ code: 'POLICY_DENIED' });
  });
});

describe('argument policies inside a script', () => {
  it("a script's inner calls are judged as direct calls are", async () => {
    const code =
      'const r = await tools.call("mcp_db_query", { sql: "SELECT 3" });\ntry { await tools.call("mcp_db_query", { sql: "DROP TABLE orders" }); return "dropped"; } catch (err) { return [r, err.code, err.message]; }';
    const res = await rest(agent, '/scripts/run', { code });
    const body = (await res.json()) as { value: unknown };
    expect(body.value).toEqual(['ran SELECT 3', 'POLICY_DENIED', 'Policy "sql-read-only" refused the call: only SELECT statements may run']);
  });
});

describe('shadow mode', () => {
  it('a shadow rule denies nothing, and /policies/impact counts exactly the calls it would have denied, per agent', async () => {
    const since = Date.now();
    const ann = await addAgentKey(d, { name: 'shadow-ann' });
    const bob = await addAgentKey(d, { name: 'shadow-bob' });
    for (const [key, amount] of [
      [ann, 5],
      [ann, 20],
      [ann, 50],
      [bob, 30],
      [bob, 1],
    ] as const) {
      const res = await call(key, 'refund', { amount });
      expect(await res.json()).toEqual({ content: [{ type: 'text', text: `refunded ${amount}` }] });
    }
    const impact = await d.json<{
      rules: Array<{ name: string; mode: string; impact: unknown[] }>;
      impact: Array<{ rule: string; agent: string; name: string; count: number; examples: string[] }>;
    }>(`/policies/impact?since=${since}`);
    expect(impact.status).toBe(200);
    const rows = impact.body.impact.filter((row) => row.agent.startsWith('shadow-'));
    expect(rows.map(({ rule, agent: who, name, count }) => ({ rule, agent: who, name, count }))).toEqual([
      { rule: 'refund-cap-trial', agent: 'shadow-ann', name: 'mcp_db_refund', count: 2 },
      { rule: 'refund-cap-trial', agent: 'shadow-bob', name: 'mcp_db_refund', count: 1 },
    ]);
    expect(rows[0]?.examples).toHaveLength(2);
    const rule = impact.body.rules.find((r) => r.name === 'refund-cap-trial');
    expect(rule).toMatchObject({ mode: 'shadow' });
    expect(rule?.impact).toHaveLength(2);

    const audited = await d.json<{ entries: Array<{ kind: string; agent: string; outcome: string; code: string }> }>('/audit?agent=shadow-ann&outcome=denied');
    expect(audited.body.entries.filter((entry) => entry.kind === 'policy')).toHaveLength(2);
    // An agent may not read it.
    expect((await rest(ann, '/policies/impact')).status).toBe(403);
  });
});

describe('policies in the config file', () => {
  it('a reload applies an edited rule set; a rule that does not compile leaves the file ignored, the last good set in force, and says where', async () => {
    const home = await realpath(await tempDir((remove) => onTestFinished(remove)));
    const configPath = join(home, 'switchboard.json');
    const file = (policies: unknown[]): Promise<void> => writeFile(configPath, JSON.stringify({ mcpServers: { db: fixtureServerConfig('policy-target') }, policies }));
    const noDrop = { name: 'no-drop', match: { tools: ['query'] }, when: 'args.sql.contains("DROP")', effect: 'deny', reason: 'no DROP' };
    await file([noDrop]);
    const live = await startDaemon({ realDiscovery: true, deps: { home, cwd: home, env: {}, configPath }, config: { watch: false, policies: [noDrop] as never } });
    const query = async (sql: string): Promise<number> =>
      (await live.fetch('/tools/mcp_db_query/call', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { sql } }) })).status;
    expect(await query('DROP TABLE t')).toBe(403);
    expect(await query('DELETE FROM t')).toBe(200);

    await file([{ ...noDrop, name: 'no-delete', when: 'args.sql.contains("DELETE")', reason: 'no DELETE' }]);
    expect((await live.json('/reload', { method: 'POST' })).status).toBe(200);
    expect(await query('DELETE FROM t')).toBe(403);
    expect(await query('DROP TABLE t')).toBe(200);

    await file([{ ...noDrop, name: 'typo', when: 'arg.sql.contains("DROP")' }]);
    await live.json('/reload', { method: 'POST' });
    expect(await query('DELETE FROM t')).toBe(403);
    const status = await live.json<{ discovery: { warnings: Array<{ message: string }> } }>('/status');
    expect(status.body.discovery.warnings.map((w) => w.message)).toContainEqual(
      `${configPath}: policies.0.when: policy "typo": CEL does not compile at 1:1: Unknown variable: arg (file ignored)`,
    );
  });
});
