import { describe, expect, it } from 'vitest';
import { appOwnToolName } from '../../../../src/gateway/lists/app-own-names.js';
import type { BridgedTool } from '../../../../src/upstream/catalogue/tool-bridge.js';

/** An MCP App's own tool calls (issue #41): which exposed tool an unprefixed name means, if any. */
const tool = (server: string, own: string, meta?: Record<string, unknown>): BridgedTool =>
  ({ name: `mcp_${server}_${own}`, originalName: own, server, description: '', inputSchema: { type: 'object' }, ...(meta ? { _meta: meta } : {}) }) as BridgedTool;
const view = (servers: string[]) => ({ allowsTool: (t: { server: string }) => servers.includes(t.server) }) as never;

const charts = [tool('charts', 'show_chart', { ui: { resourceUri: 'ui://charts/chart.html' } }), tool('charts', 'refresh')];
const maps = [tool('maps', 'show_map', { 'ui/resourceUri': 'ui://maps/map.html' }), tool('maps', 'refresh')];
const plain = [tool('files', 'read'), tool('files', 'refresh')];
const source = (...lists: BridgedTool[][]) => ({ list: () => lists.flat() });

describe('appOwnToolName', () => {
  it("resolves a server's own name to its one exposed tool of an app server in the caller's view", () => {
    expect(appOwnToolName('show_chart', source(charts, maps, plain), undefined)).toBe('mcp_charts_show_chart');
    // A tool without a view of its own, of an app server: an app's script calls those too.
    expect(appOwnToolName('refresh', source(charts, plain), undefined)).toBe('mcp_charts_refresh');
    expect(appOwnToolName('refresh', source(charts, maps, plain), view(['maps', 'files']))).toBe('mcp_maps_refresh');
  });

  it('leaves unresolved a name two app servers share, a tool of a server that serves no app, and a tool outside the view', () => {
    expect(appOwnToolName('refresh', source(charts, maps), undefined)).toBeUndefined();
    expect(appOwnToolName('read', source(charts, plain), undefined)).toBeUndefined();
    expect(appOwnToolName('show_chart', source(charts, maps), view(['maps']))).toBeUndefined();
    expect(appOwnToolName('nothing', source(charts), undefined)).toBeUndefined();
  });
});
