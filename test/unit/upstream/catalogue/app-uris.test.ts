import { describe, expect, it } from 'vitest';
import { appUriTarget, exposeAppUri, exposeListed, exposeReadResult, exposeToolMeta, exposeToolResult, upstreamUri } from '../../../../src/upstream/catalogue/app-uris.js';
import { ResourceCatalogue } from '../../../../src/upstream/catalogue/resource-catalogue.js';

describe('MCP Apps URIs (issue #41)', () => {
  it("shows a server's ui:// URI under its name and maps it back; any other URI passes", () => {
    expect(exposeAppUri('alpha', 'ui://widget/index.html')).toBe('ui://alpha/widget/index.html');
    expect(appUriTarget('ui://alpha/widget/index.html')).toEqual({ server: 'alpha', uri: 'ui://widget/index.html' });
    // A server name that is no URI host is escaped, and comes back whole.
    const odd = exposeAppUri('my server/1', 'ui://w');
    expect(odd).toBe('ui://my%20server%2F1/w');
    expect(appUriTarget(odd)).toEqual({ server: 'my server/1', uri: 'ui://w' });
    expect(exposeAppUri('alpha', 'file:///notes.md')).toBe('file:///notes.md');
    expect(upstreamUri('file:///notes.md')).toBe('file:///notes.md');
    expect(appUriTarget('ui://no-path')).toBeUndefined();
  });

  it("exposes a tool's view pointers and leaves the rest of its _meta untouched", () => {
    const meta = { ui: { resourceUri: 'ui://w/a.html', visibility: ['app'] }, 'ui/resourceUri': 'ui://w/a.html', 'openai/outputTemplate': 'ui://w/a.html', other: 1 };
    expect(exposeToolMeta('beta', meta)).toEqual({
      ui: { resourceUri: 'ui://beta/w/a.html', visibility: ['app'] },
      'ui/resourceUri': 'ui://beta/w/a.html',
      'openai/outputTemplate': 'ui://beta/w/a.html',
      other: 1,
    });
    const plain = { other: 1 };
    expect(exposeToolMeta('beta', plain)).toBe(plain);
    expect(exposeToolMeta('beta', undefined)).toBeUndefined();
  });

  it('exposes listed views, read contents and tool result blocks, keeping mimeType and _meta', () => {
    expect(exposeListed('a', { uri: 'ui://w', name: 'w', mimeType: 'text/html;profile=mcp-app', _meta: { ui: {} } })).toEqual({
      uri: 'ui://a/w',
      name: 'w',
      mimeType: 'text/html;profile=mcp-app',
      _meta: { ui: {} },
    });
    expect(exposeListed('a', { uriTemplate: 'ui://p/{id}', name: 'p' })).toEqual({ uriTemplate: 'ui://a/p/{id}', name: 'p' });
    expect(
      exposeReadResult('a', {
        contents: [
          { uri: 'ui://w', text: '<p>', _meta: { x: 1 } },
          { uri: 'file:///f', text: 'f' },
        ],
      }),
    ).toEqual({
      contents: [
        { uri: 'ui://a/w', text: '<p>', _meta: { x: 1 } },
        { uri: 'file:///f', text: 'f' },
      ],
    });
    expect(
      exposeToolResult('a', {
        content: [
          { type: 'resource_link', uri: 'ui://w', name: 'w' },
          { type: 'resource', resource: { uri: 'ui://w', text: '<p>' } },
          { type: 'text', text: 'ui://w' },
        ],
      }),
    ).toEqual({
      content: [
        { type: 'resource_link', uri: 'ui://a/w', name: 'w' },
        { type: 'resource', resource: { uri: 'ui://a/w', text: '<p>' } },
        { type: 'text', text: 'ui://w' },
      ],
    });
  });

  it('two servers with the same view collide no more, and each exposed view routes to its server', () => {
    const catalogue = new ResourceCatalogue();
    catalogue.setServer('alpha', [{ uri: 'ui://widget/index.html', name: 'w' }], []);
    catalogue.setServer('beta', [{ uri: 'ui://widget/index.html', name: 'w' }], [{ uriTemplate: '{+anything}', name: 'all' }]);
    expect(catalogue.list().map((r) => r.uri)).toEqual(['ui://alpha/widget/index.html', 'ui://beta/widget/index.html']);
    expect(catalogue.collisions()).toEqual([]);
    // beta's catch-all template does not take alpha's view; a view no list shows goes to the server it names.
    expect(catalogue.route('ui://alpha/widget/index.html')).toBe('alpha');
    expect(catalogue.route('ui://alpha/unlisted.html')).toBe('alpha');
    expect(catalogue.route('ui://beta/widget/index.html')).toBe('beta');
  });
});
