import { describe, expect, it } from 'vitest';
import { probeTimeout, resolveCallTimeout, resolveConnectTimeout, toRoots } from '../../../../src/upstream/transport/client.js';

describe('resolveConnectTimeout', () => {
  it('prefers SWITCHBOARD_MCP_TIMEOUT_MS, then config.timeout, then 30 s', () => {
    expect(resolveConnectTimeout({ timeout: 5_000 }, { SWITCHBOARD_MCP_TIMEOUT_MS: '1234' })).toBe(1234);
    expect(resolveConnectTimeout({ timeout: 5_000 }, {})).toBe(5_000);
    expect(resolveConnectTimeout({}, {})).toBe(30_000);
  });

  it('keeps 0 (disabled) and skips invalid values', () => {
    expect(resolveConnectTimeout({ timeout: 5_000 }, { SWITCHBOARD_MCP_TIMEOUT_MS: '0' })).toBe(0);
    expect(resolveConnectTimeout({ timeout: 0 }, {})).toBe(0);
    expect(resolveConnectTimeout({ timeout: 5_000 }, { SWITCHBOARD_MCP_TIMEOUT_MS: 'soon' })).toBe(5_000);
    expect(resolveConnectTimeout({ timeout: -1 }, { SWITCHBOARD_MCP_TIMEOUT_MS: '' })).toBe(30_000);
  });
});

describe('resolveCallTimeout', () => {
  it('is config.callTimeout, else 60 s; 0 disables', () => {
    expect(resolveCallTimeout({})).toBe(60_000);
    expect(resolveCallTimeout({ callTimeout: 10 })).toBe(10);
    expect(resolveCallTimeout({ callTimeout: 0 })).toBe(0);
  });
});

describe('probeTimeout (issue #36 item 3)', () => {
  it('gives a stdio probe the connect timeout less a reserve for initialize (at most 5 s, at most half)', () => {
    expect(probeTimeout({ command: 'x' }, 30_000)).toBe(25_000);
    expect(probeTimeout({ command: 'x' }, 4_000)).toBe(2_000);
    // No connect timeout: measured against the default one, so a silent server is still spoken to.
    expect(probeTimeout({ command: 'x' }, 0)).toBe(25_000);
  });

  it('keeps an HTTP probe short', () => {
    expect(probeTimeout({ url: 'http://127.0.0.1:1/mcp' }, 30_000)).toBe(5_000);
    expect(probeTimeout({ type: 'http', url: 'http://127.0.0.1:1/mcp' }, 2_000)).toBe(2_000);
    expect(probeTimeout({ type: 'carrier-pigeon' }, 30_000)).toBe(5_000);
  });
});

describe('toRoots', () => {
  it('turns paths into file:// roots named after their directory, passing URIs through', () => {
    expect(toRoots(['/srv/my project', 'file:///already/uri'])).toEqual([{ uri: 'file:///srv/my%20project', name: 'my project' }, { uri: 'file:///already/uri' }]);
  });
});
