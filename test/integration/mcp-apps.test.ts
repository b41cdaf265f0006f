import { ProtocolError, type Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { deferred } from '../../src/util/deferred.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { addAgentKey, AGENT_ERAS, agentClient, OPERATOR_TOKEN } from '../helpers/agents.js';
import { sharedByTests } from '../helpers/shared.js';

/**
 * Issue #41 item 2: MCP Apps across servers. Two real app servers (test/fixtures/servers/apps-stdio.ts)
 * serve the same view, `ui://widget/index.html`: `alpha` speaks both eras (Switchboard reaches it
 * in 2026-07-28), `beta` only 2025. Through Switchboard each one's `ui://` URIs carry the server's
 * name, so each tool's `_meta` pointer reads its own server's HTML. Agents: `both` (both servers)
 * and `alphaOnly` (server `alpha` only).
 */

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const UI_CAPABILITIES = { extensions: { [UI]: { mimeTypes: [MIME] } } };
const viewMeta = (app: string) => ({ ui: { prefersBorder: true, csp: { connectDomains: [`https://${app}.example`] } } });

interface Setup {
  d: TestDaemon;
  both: string;
  alphaOnly: string;
  /** Both servers, in search mode (the meta-tools). */
  searcher: string;
}

async function setUp(): Promise<Setup> {
  const d = await startDaemon({
    lifetime: 'manual',
    servers: {
      alpha: fixtureServerConfig('apps-stdio', { env: { APP: 'alpha' } }),
      beta: fixtureServerConfig('apps-stdio', { env: { APP: 'beta', ERA: 'legacy' } }),
    },
    config: { token: OPERATOR_TOKEN },
  });
  const both = await addAgentKey(d, { name: 'both', servers: ['alpha', 'beta'] });
  const alphaOnly = await addAgentKey(d, { name: 'alpha-only', servers: ['alpha'] });
  const searcher = await addAgentKey(d, { name: 'searcher', servers: ['alpha', 'beta'], catalogue: 'search' });
  return { d, both, alphaOnly, searcher };
}

const shared = sharedByTests(setUp, ({ d }) => d.close());

function textOf(result: unknown): string {
  const block = (result as { content: Array<{ type: string; text?: string }> }).content[0];
  return block?.text ?? '';
}

describe('MCP Apps across servers', () => {
  for (const [eraName, era] of AGENT_ERAS) {
    it(`${eraName}: each tool's _meta resolves to its own server's view, mimeType and _meta intact`, async () => {
      const { d, both } = await shared();
      const client = await agentClient(d, both, era, UI_CAPABILITIES);
      // The servers declare the extension, so the aggregate does (beside the gateway's own tasks, issue #41).
      expect(client.getServerCapabilities()?.extensions).toEqual({ [UI]: {}, 'io.modelcontextprotocol/tasks': {} });
      const { tools } = await client.listTools();
      for (const app of ['alpha', 'beta']) {
        const tool = tools.find((t) => t.name === `mcp_${app}_show_widget`);
        const exposed = `ui://${app}/widget/index.html`;
        // Both pointers, MCP Apps' and its older flat key, name the server's own view; the rest of _meta passes.
        const { 'switchboard/origin': _origin, ...meta } = tool?._meta ?? {};
        expect(meta).toEqual({ ui: { resourceUri: exposed, visibility: ['model', 'app'] }, 'ui/resourceUri': exposed });
        const read = await client.readResource({ uri: (tool?._meta?.ui as { resourceUri: string }).resourceUri });
        expect(read.contents).toEqual([{ uri: exposed, mimeType: MIME, text: `<!doctype html><title>${app}</title><p>${app} widget</p>`, _meta: viewMeta(app) }]);
        // A template's view is the server's own too.
        const page = await client.readResource({ uri: `ui://${app}/pages/7.html` });
        expect((page.contents[0] as { text: string }).text).toContain(`${app} page 7`);
        // A view a tool result links to reads back through Switchboard.
        const call = await client.callTool({ name: `mcp_${app}_show_widget`, arguments: {} });
        const link = (call.content as Array<{ type: string; uri?: string }>).find((block) => block.type === 'resource_link');
        expect(link?.uri).toBe(exposed);
      }
      const { resources } = await client.listResources();
      expect(resources.filter((r) => r.uri.startsWith('ui://')).sort((a, b) => a.uri.localeCompare(b.uri))).toEqual([
        { uri: 'ui://alpha/widget/index.html', name: 'widget', mimeType: MIME, _meta: viewMeta('alpha') },
        { uri: 'ui://beta/widget/index.html', name: 'widget', mimeType: MIME, _meta: viewMeta('beta') },
      ]);
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(['ui://alpha/pages/{page}.html', 'ui://beta/pages/{page}.html']);
      // The server's own URI names no server of Switchboard's: nothing to read.
      await expect(client.readResource({ uri: 'ui://widget/index.html' })).rejects.toBeInstanceOf(ProtocolError);
    });

    it(`${eraName}: an agent whose view leaves out a server cannot read its app`, async () => {
      const { d, alphaOnly } = await shared();
      const client = await agentClient(d, alphaOnly, era, UI_CAPABILITIES);
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(['ui://alpha/widget/index.html']);
      expect((await client.readResource({ uri: 'ui://alpha/widget/index.html' })).contents).toHaveLength(1);
      const hidden = (await client.readResource({ uri: 'ui://beta/widget/index.html' }).catch((e: unknown) => e)) as ProtocolError;
      const unknown = (await client.readResource({ uri: 'ui://nosuch/widget/index.html' }).catch((e: unknown) => e)) as ProtocolError;
      expect(hidden).toBeInstanceOf(ProtocolError);
      // Answered exactly as a server nobody has: the view tells nothing of what lies outside it.
      expect(JSON.stringify([hidden.code, hidden.data, hidden.message]).replaceAll('beta', '<server>')).toBe(
        JSON.stringify([unknown.code, unknown.data, unknown.message]).replaceAll('nosuch', '<server>'),
      );
      expect(hidden.message).toContain('No server has the resource');
      const denied = (await d.json<{ entries: Array<{ agent: string; name: string }> }>('/audit?outcome=denied&agent=alpha-only')).body.entries;
      expect(denied.map((row) => row.name)).toContain('ui://beta/widget/index.html');
    });

    it(`${eraName}: the agent's UI capability reaches the upstream`, async () => {
      const { d, both } = await shared();
      const capable = await agentClient(d, both, era, UI_CAPABILITIES);
      const plain = await agentClient(d, both, era);
      const seen = async (client: Client, app: string) =>
        JSON.parse(textOf(await client.callTool({ name: `mcp_${app}_ui_capability`, arguments: {} }))) as { era: string; call: unknown; list: unknown };
      // A 2026-07-28 server is told per request: exactly what the agent declared.
      expect(await seen(capable, 'alpha')).toEqual({ era: '2026-07-28', call: { mimeTypes: [MIME] }, list: { mimeTypes: [MIME] } });
      expect((await seen(plain, 'alpha')).call).toBeNull();
      // A 2025 session is shared by every agent: Switchboard declares the extension on it.
      expect(await seen(capable, 'beta')).toEqual({ era: '2025', call: { mimeTypes: [MIME] }, list: { mimeTypes: [MIME] } });
    });
  }

  it("a subscription to a view reaches its own 2025 server with the server's URI, and the update names the exposed view", async () => {
    const { d, both } = await shared();
    const client = await agentClient(d, both, 'legacy', UI_CAPABILITIES);
    const uri = 'ui://beta/widget/index.html';
    const updated = deferred<string>();
    client.setNotificationHandler('notifications/resources/updated', (n) => updated.resolve(n.params.uri));
    await client.subscribeResource({ uri });
    // The server was asked for its own URI: it says it is subscribed.
    expect(textOf(await client.callTool({ name: 'mcp_beta_touch_view', arguments: {} }))).toBe('touched');
    expect(await updated.promise).toBe(uri);
    await client.unsubscribeResource({ uri });
    expect(textOf(await client.callTool({ name: 'mcp_beta_touch_view', arguments: {} }))).toBe('nobody subscribed');
  });

  it("an app's own (unprefixed) tool name reaches its server's tool when one app server in the view has it; two servers' same name is refused as unknown", async () => {
    const { d, both, alphaOnly } = await shared();
    const mine = await agentClient(d, alphaOnly, { pin: '2026-07-28' }, UI_CAPABILITIES);
    const call = await mine.callTool({ name: 'show_widget', arguments: {} });
    const link = (call.content as Array<{ type: string; uri?: string }>).find((block) => block.type === 'resource_link');
    expect(link?.uri).toBe('ui://alpha/widget/index.html');
    // Audited (and judged by policies, approvals, the view) under the name the catalogue gives it.
    const audited = (await d.json<{ entries: Array<{ name: string }> }>('/audit?agent=alpha-only')).body.entries;
    expect(audited.map((row) => row.name)).toContain('mcp_alpha_show_widget');
    expect(audited.map((row) => row.name)).not.toContain('show_widget');
    // alpha and beta both have show_widget: whose view called cannot be told.
    const bothClient = await agentClient(d, both, { pin: '2026-07-28' }, UI_CAPABILITIES);
    const refused = (await bothClient.callTool({ name: 'show_widget', arguments: {} }).catch((e: unknown) => e)) as ProtocolError;
    expect(refused).toBeInstanceOf(ProtocolError);
    expect(refused.data).toMatchObject({ code: 'TOOL_NOT_FOUND', suggestions: expect.arrayContaining(['mcp_alpha_show_widget', 'mcp_beta_show_widget']) });
  });

  it("search mode: search_tools and describe_tools show each tool's _meta as the full list does, its view pointers namespaced", async () => {
    const { d, searcher } = await shared();
    const client = await agentClient(d, searcher, { pin: '2026-07-28' }, UI_CAPABILITIES);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('mcp_alpha_show_widget');
    const pointers = (tool: { _meta?: Record<string, unknown> } | undefined) => {
      const { 'switchboard/origin': _origin, ...meta } = tool?._meta ?? {};
      return meta;
    };
    const expected = (app: string) => ({ ui: { resourceUri: `ui://${app}/widget/index.html`, visibility: ['model', 'app'] }, 'ui/resourceUri': `ui://${app}/widget/index.html` });
    const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'show widget' } })).structuredContent as {
      tools: Array<{ name: string; _meta?: Record<string, unknown> }>;
    };
    for (const app of ['alpha', 'beta']) expect(pointers(found.tools.find((t) => t.name === `mcp_${app}_show_widget`))).toEqual(expected(app));
    const described = (await client.callTool({ name: 'describe_tools', arguments: { names: ['mcp_alpha_show_widget', 'mcp_beta_show_widget'] } })).structuredContent as {
      tools: Array<{ name: string; _meta?: Record<string, unknown> }>;
    };
    expect(described.tools.map((t) => [t.name, pointers(t)])).toEqual([
      ['mcp_alpha_show_widget', expected('alpha')],
      ['mcp_beta_show_widget', expected('beta')],
    ]);
    // The pointer reads the server's own view through Switchboard.
    const uri = (described.tools[1]?._meta?.ui as { resourceUri: string }).resourceUri;
    expect(((await client.readResource({ uri })).contents[0] as { text: string }).text).toContain('beta widget');
  });

  it('REST shows the views under their servers: GET /tools, GET /resources, GET /resources/read', async () => {
    const { d } = await shared();
    const tools = (await d.json<{ tools: Array<{ name: string; _meta?: Record<string, unknown> }> }>('/tools')).body.tools;
    expect(tools.find((t) => t.name === 'mcp_beta_show_widget')?._meta?.['ui/resourceUri']).toBe('ui://beta/widget/index.html');
    const listed = (await d.json<{ resources: Array<{ uri: string; server: string; mimeType?: string }> }>('/resources')).body.resources;
    expect(listed.filter((r) => r.uri.startsWith('ui://')).map(({ uri, server, mimeType }) => ({ uri, server, mimeType }))).toEqual([
      { uri: 'ui://alpha/widget/index.html', server: 'alpha', mimeType: MIME },
      { uri: 'ui://beta/widget/index.html', server: 'beta', mimeType: MIME },
    ]);
    const read = await d.json<{ contents: Array<{ uri: string; text: string; _meta: unknown }> }>(`/resources/read?uri=${encodeURIComponent('ui://beta/widget/index.html')}`);
    expect(read.status).toBe(200);
    expect(read.body.contents[0]).toMatchObject({ uri: 'ui://beta/widget/index.html', text: expect.stringContaining('beta widget'), _meta: viewMeta('beta') });
  });
});
