import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTools, type CommandIo } from '../../src/cli/client/index.js';
import { addAgentKey, OPERATOR_TOKEN } from '../helpers/agents.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';

/**
 * Issue #23 items 2 and 6: `GET /tools/search` over a real daemon and two real fixture servers
 * (the rich fixture twice, as `alpha` and `beta`), as the operator and as agents whose views hide
 * a server or tools; its 400s and 404s; the neighbourhood map (issue #37); and `switchboard tools
 * --search`. One daemon serves the whole file (nothing here changes it but adding two agents).
 */

const TOKEN = OPERATOR_TOKEN;

interface Hit {
  name: string;
  server: string;
  title?: string;
  description: string;
  score: number;
}
interface Related {
  server: string;
  about?: string;
  tools: Array<{ name: string; about: string }>;
  names: string[];
  more: number;
}
interface Failure {
  error: { code: string; message: string };
}

let shared: Promise<{ d: TestDaemon; alpha: string; reader: string }> | undefined;

function setUp(): Promise<{ d: TestDaemon; alpha: string; reader: string }> {
  return (shared ??= (async () => {
    const d = await startDaemon({
      servers: {
        alpha: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy', URI_SCHEME: 'alpha', INSTRUCTIONS: 'A workbench for quokka husbandry. Use it for everything.' } }),
        beta: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy', URI_SCHEME: 'beta' } }),
      },
      config: { token: OPERATOR_TOKEN },
      lifetime: 'manual',
    });
    const add = (body: Record<string, unknown>): Promise<string> => addAgentKey(d, body);
    const alpha = await add({ name: 'alpha', servers: ['alpha'], exclude: ['mcp_alpha_ask_*'] });
    const reader = await add({ name: 'reader', servers: ['alpha', 'beta'], access: 'read' });
    return { d, alpha, reader };
  })());
}

beforeAll(async () => {
  await setUp();
});
afterAll(async () => {
  await (await shared)?.d.close();
});

async function search<T = { tools: Hit[] }>(d: TestDaemon, query: string, key?: string): Promise<{ status: number; body: T }> {
  const { status, body } = await d.json<T>(`/tools/search?${query}`, key !== undefined ? { headers: { authorization: `Bearer ${key}` } } : {});
  return { status, body };
}

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CommandIo = { argv, env: {}, stdout: { write: (chunk: string) => (stdout += chunk) }, stderr: { write: (chunk: string) => (stderr += chunk) } };
  const code = await runTools(io);
  return { code, stdout, stderr };
}

describe('GET /tools/search', () => {
  it('ranks the tools of every server for the operator, and only the view of an agent', async () => {
    const { d, alpha, reader } = await setUp();

    const all = await search(d, 'q=send+progress+notifications&limit=2');
    expect(all.status).toBe(200);
    expect(all.body.tools.map((t) => t.name).sort()).toEqual(['mcp_alpha_progress', 'mcp_beta_progress']);
    for (const hit of all.body.tools) {
      expect(hit).toEqual({ name: hit.name, server: hit.server, description: 'Sends `steps` progress notifications', score: expect.any(Number) });
      expect(hit.score).toBeGreaterThan(0);
    }

    // The operator finds the ask_* tools of both servers; `alpha` never sees beta, nor its own ask_*.
    const asks = await search(d, 'q=ask&limit=50');
    expect(asks.body.tools.filter((t) => t.server === 'beta').length).toBeGreaterThan(0);
    expect(asks.body.tools.some((t) => t.name.startsWith('mcp_alpha_ask_'))).toBe(true);
    for (const query of ['q=ask&limit=50', 'q=asks+the+agent+user+roots&limit=50', 'q=beta&limit=50', 'q=progress&limit=50']) {
      const seen = await search(d, query, alpha);
      expect(seen.status, query).toBe(200);
      for (const hit of seen.body.tools) {
        expect(hit.server, query).toBe('alpha');
        expect(hit.name, query).not.toMatch(/^mcp_alpha_ask_/);
      }
    }
    expect((await search(d, 'q=progress', alpha)).body.tools.map((t) => t.name)).toEqual(['mcp_alpha_progress']);

    // A hidden server is as unknown to the agent as one that does not exist.
    const hidden = await search<Failure>(d, 'q=progress&server=beta', alpha);
    expect(hidden).toEqual({ status: 404, body: { error: { code: 'SERVER_NOT_FOUND', message: 'No server named "beta"' } } });

    // `read` access: only tools annotated read-only, whatever the query.
    const operatorTools = (await d.json<{ tools: Array<{ name: string; annotations?: { readOnlyHint?: boolean } }> }>('/tools')).body.tools;
    const readOnly = new Set(operatorTools.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name));
    const readerHits = (await search(d, 'q=returns+structured+content+log+level+progress+ask&limit=50', reader)).body.tools;
    for (const hit of readerHits) expect(readOnly.has(hit.name), hit.name).toBe(true);
    const operatorHits = (await search(d, 'q=returns+structured+content+log+level+progress+ask&limit=50')).body.tools;
    expect(operatorHits.length).toBeGreaterThan(readerHits.length);

    // One server only.
    const onlyBeta = await search(d, 'q=progress&server=beta');
    expect(onlyBeta.body.tools.map((t) => t.name)).toEqual(['mcp_beta_progress']);
  });

  it('maps the neighbourhood under the hits: the other tools of the likely servers, in the view only, never a hit twice', async () => {
    const { d, alpha } = await setUp();
    const all = (await d.json<{ tools: Hit[] }>('/tools')).body.tools;
    const answer = (await search<{ tools: Hit[]; related: Related[] }>(d, 'q=progress&limit=1')).body;
    expect(answer.tools).toHaveLength(1);
    const mapped = answer.related.flatMap((group) => [...group.tools.map((t) => t.name), ...group.names]);
    expect(mapped).not.toContain(answer.tools[0]?.name);
    expect(new Set(mapped).size).toBe(mapped.length);
    // Both servers' progress tools rank; the first server's whole list fits in the default 12 KB.
    expect(answer.related.map((group) => group.server).sort()).toEqual(['alpha', 'beta']);
    const first = answer.related.find((group) => group.server === answer.tools[0]?.server);
    expect(new Set([answer.tools[0]?.name, ...(first?.tools.map((t) => t.name) ?? []), ...(first?.names ?? [])])).toEqual(
      new Set(all.filter((t) => t.server === answer.tools[0]?.server).map((t) => t.name)),
    );
    expect(first?.more).toBe(0);
    expect(Buffer.byteLength(JSON.stringify(answer))).toBeLessThanOrEqual(12_288);

    // What a server says of itself (its instructions) is searched, and heads its part of the map.
    const husbandry = (await search<{ tools: Hit[]; related: Related[] }>(d, 'q=quokka+husbandry&limit=1')).body;
    expect(husbandry.tools.map((t) => t.server)).toEqual(['alpha']);
    expect(husbandry.related[0]).toMatchObject({ server: 'alpha', about: 'A workbench for quokka husbandry.' });
    // The other server matched nothing: it comes after, whole, as the rest of the view.
    expect(husbandry.related.map((group) => group.server)).toEqual(['alpha', 'beta']);
    expect(husbandry.related[1]).toMatchObject({ tools: [], more: 0 });

    // An agent's recent calls lift its ranking (issue #37 item 4): two equal matches, the one it called first.
    const both = await addAgentKey(d, { name: 'both', servers: ['alpha', 'beta'] });
    const asBoth = { authorization: `Bearer ${both}` };
    expect((await search(d, 'q=send+progress+notifications&limit=2', both)).body.tools.map((t) => t.name)).toEqual(['mcp_alpha_progress', 'mcp_beta_progress']);
    const called = await d.fetch('/tools/mcp_beta_progress/call', {
      method: 'POST',
      headers: { ...asBoth, 'content-type': 'application/json' },
      body: '{"arguments":{"steps":1}}',
    });
    expect(called.status).toBe(200);
    // The call returned by the search is its hit, seen once the audit has recorded the call.
    await expect
      .poll(async () => (await d.json<{ search: { conversions: { hits: number } } }>('/status')).body.search.conversions.hits, { interval: 100, timeout: 10_000 })
      .toBe(1);
    expect((await search(d, 'q=send+progress+notifications&limit=2', both)).body.tools.map((t) => t.name)).toEqual(['mcp_beta_progress', 'mcp_alpha_progress']);

    const seen = (await search<{ tools: Hit[]; related: Related[] }>(d, 'q=progress&limit=1', alpha)).body;
    for (const group of seen.related) {
      expect(group.server).toBe('alpha');
      for (const name of [...group.tools.map((t) => t.name), ...group.names]) expect(name).not.toMatch(/^mcp_alpha_ask_/);
    }
  });

  it('answers bad input with precise 400s and 404s, and a query of only punctuation with no hits', async () => {
    const { d } = await setUp();
    const cases: Array<[string, number, string, string]> = [
      ['', 400, 'VALIDATION_FAILED', 'q: Expected a single value'],
      ['q=', 400, 'VALIDATION_FAILED', 'q: Must not be empty'],
      ['q=%20%20%20', 400, 'VALIDATION_FAILED', 'q: Must not be empty'],
      [`q=${'x'.repeat(501)}`, 400, 'VALIDATION_FAILED', 'q: At most 500 characters'],
      ['q=a&q=b', 400, 'VALIDATION_FAILED', 'q: Expected a single value'],
      ['q=file&limit=0', 400, 'VALIDATION_FAILED', 'limit: Expected an integer from 1 to 50'],
      ['q=file&limit=51', 400, 'VALIDATION_FAILED', 'limit: Expected an integer from 1 to 50'],
      ['q=file&limit=ten', 400, 'VALIDATION_FAILED', 'limit: Expected an integer from 1 to 50'],
      ['q=file&limit=2.5', 400, 'VALIDATION_FAILED', 'limit: Expected an integer from 1 to 50'],
      ['q=file&server=', 400, 'VALIDATION_FAILED', 'server: Must not be empty'],
      ['q=file&server=nope', 404, 'SERVER_NOT_FOUND', 'No server named "nope"'],
    ];
    for (const [query, status, code, message] of cases) {
      const res = await search<Failure>(d, query);
      expect(res, query).toEqual({ status, body: { error: { code, message } } });
    }
    // 500 characters after trimming are fine.
    expect((await search(d, `q=${encodeURIComponent(`  ${'y'.repeat(500)}  `)}`)).status).toBe(200);
    for (const query of ['q=%3F%21...', 'q=---%20%2A%2A%2A', 'q=%F0%9F%98%80', 'q=the+of+a']) {
      expect(await search(d, query), query).toEqual({ status: 200, body: { tools: [], related: [] } });
    }
    // The name "search" is the route's, never a tool's lookup.
    expect((await d.json<Failure>('/tools/search')).body.error.code).toBe('VALIDATION_FAILED');
  });

  it('counts searches on GET /search/stats and /metrics, for the operator only, without query texts by default', async () => {
    const { d, alpha } = await setUp();
    await search(d, 'q=%3F%21');
    // Both small servers' whole lists fit in one answer's map: every tool has been returned.
    await search(d, 'q=progress&limit=1');
    const stats = (await d.json<{ searches: number; zeroResults: number; conversions: { hits: number }; neverReturned: { count: number }; queries?: unknown }>('/search/stats'))
      .body;
    expect(stats.searches).toBeGreaterThanOrEqual(2);
    expect(stats.zeroResults).toBeGreaterThanOrEqual(1);
    const status = (await d.json<{ search: { conversions: { hits: number } } }>('/status')).body;
    expect(stats.conversions.hits).toBe(status.search.conversions.hits);
    expect(stats.neverReturned).toEqual({ count: 0, names: [] });
    expect(stats.queries).toBeUndefined();
    expect((await d.json('/search/stats', { headers: { authorization: `Bearer ${alpha}` } })).status).toBe(403);
    const metrics = await (await d.fetch('/metrics')).text();
    expect(metrics).toMatch(/^switchboard_search_requests_total \d+$/m);
    expect(metrics).toMatch(/^switchboard_search_conversions_total\{outcome="hit"\} \d+$/m);
    expect(metrics).toMatch(/^switchboard_search_tools_never_returned 0$/m);
  });
});

describe('switchboard tools --search', () => {
  it('prints the ranked hits with a score, the raw body with --json, and the daemon’s 400 as an error', async () => {
    const { d } = await setUp();
    const base = ['--url', d.url, '--token', TOKEN];

    const table = await run([...base, '--search', 'progress notifications', '--limit', '2']);
    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(table.stdout).toMatch(/^NAME\s+SERVER\s+SCORE\s+DESCRIPTION$/m);
    expect(table.stdout).toMatch(/^mcp_(alpha|beta)_progress\s+(alpha|beta)\s+\d+\.\d\d\s+Sends `steps` progress notifications$/m);
    expect(table.stdout).toMatch(/^2 tools$/m);
    // Then the neighbourhood map, a server a line with its tools.
    expect(table.stdout).toMatch(/^Related tools:$/m);
    expect(table.stdout).toMatch(/^(alpha|beta):$/m);

    const json = await run([...base, '--search', 'progress', '--server', 'beta', '--json']);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as { tools: Hit[] }).tools.map((t) => t.name)).toEqual(['mcp_beta_progress']);

    const none = await run([...base, '--search', '?!']);
    expect(none).toMatchObject({ code: 0, stdout: 'No matching tools.\n' });

    const bad = await run([...base, '--search', 'progress', '--limit', '99']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('limit: Expected an integer from 1 to 50');

    const misuse = await run([...base, '--limit', '3']);
    expect(misuse.code).toBe(2);
    expect(misuse.stderr).toContain('--limit goes with --search');
  });
});
