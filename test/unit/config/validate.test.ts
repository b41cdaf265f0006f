import { describe, expect, it } from 'vitest';
import {
  BOTH_COMMAND_AND_URL,
  HTTP_NEEDS_URL,
  SANDBOX_NEEDS_STDIO,
  SSE_NEEDS_URL,
  STDIO_NEEDS_COMMAND,
  resolveTransportKind,
  unknownTypeMessage,
  validateServerConfig,
} from '../../../src/config/validate.js';

describe('validateServerConfig', () => {
  it('uses the exact SPEC §3 messages', () => {
    expect(BOTH_COMMAND_AND_URL).toBe('both "command" and "url" are set');
    expect(STDIO_NEEDS_COMMAND).toBe('stdio server needs a "command"');
    expect(HTTP_NEEDS_URL).toBe('http server needs a "url"');
    expect(SSE_NEEDS_URL).toBe('sse server needs a "url"');
    expect(unknownTypeMessage('ws')).toBe('unknown type "ws" (expected stdio, http or sse)');
  });

  it('refuses a sandbox on an http/sse server, which Switchboard does not start (issue #42)', () => {
    expect(validateServerConfig('a', { url: 'https://example.com/mcp', sandbox: true })).toEqual([SANDBOX_NEEDS_STDIO]);
    expect(validateServerConfig('a', { type: 'sse', url: 'https://example.com/sse', sandbox: { network: 'none' } })).toEqual([SANDBOX_NEEDS_STDIO]);
    expect(validateServerConfig('a', { url: 'https://example.com/mcp', sandbox: false })).toEqual([]);
    expect(validateServerConfig('a', { command: 'node', sandbox: true })).toEqual([]);
  });

  it('accepts a stdio server and a url-only server', () => {
    expect(validateServerConfig('a', { command: 'node', args: ['x.js'] })).toEqual([]);
    expect(validateServerConfig('b', { url: 'https://example.com/mcp' })).toEqual([]);
    expect(validateServerConfig('c', { type: 'sse', url: 'http://127.0.0.1:1/sse' })).toEqual([]);
  });

  it('reports each problem', () => {
    expect(validateServerConfig('a', { command: 'x', url: 'https://e.com' })).toEqual([BOTH_COMMAND_AND_URL]);
    expect(validateServerConfig('a', {})).toEqual([STDIO_NEEDS_COMMAND]);
    expect(validateServerConfig('a', { type: 'stdio', url: 'https://e.com' })).toEqual([STDIO_NEEDS_COMMAND]);
    expect(validateServerConfig('a', { type: 'http' })).toEqual([HTTP_NEEDS_URL]);
    expect(validateServerConfig('a', { type: 'sse' })).toEqual([SSE_NEEDS_URL]);
    expect(validateServerConfig('a', { type: 'ws', url: 'ws://x' })).toEqual([unknownTypeMessage('ws')]);
  });

  it('rejects a url that is not http(s)', () => {
    expect(validateServerConfig('a', { url: 'file:///etc/passwd' })).toEqual(['"url" must be an http(s) URL']);
    expect(validateServerConfig('a', { url: 'not a url' })).toEqual(['"url" must be an http(s) URL']);
  });
});

describe('resolveTransportKind', () => {
  it('defaults to stdio, or http when only a url is set', () => {
    expect(resolveTransportKind({ command: 'x' })).toBe('stdio');
    expect(resolveTransportKind({})).toBe('stdio');
    expect(resolveTransportKind({ url: 'https://e.com' })).toBe('http');
    expect(resolveTransportKind({ url: 'https://e.com', command: 'x' })).toBe('stdio');
  });

  it('keeps an explicit known type and gives undefined for an unknown one', () => {
    expect(resolveTransportKind({ type: 'sse', url: 'https://e.com' })).toBe('sse');
    expect(resolveTransportKind({ type: 'http', command: 'x' })).toBe('http');
    expect(resolveTransportKind({ type: 'websocket' })).toBeUndefined();
  });
});
