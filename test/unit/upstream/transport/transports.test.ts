import { getEventListeners } from 'node:events';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildStdioEnv, isHttpClientError, perRequestSignalFetch, transportKindOf } from '../../../../src/upstream/transport/transports.js';
import { SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { loadSdk } from '../../../../src/upstream/sdk.js';

// The daemon loads the SDK client with its first connection (src/upstream/sdk.ts); here the
// functions under test meet the SDK's values without one.
beforeAll(() => loadSdk());

describe('transportKindOf', () => {
  it('defaults to stdio, or http when only a url is set', () => {
    expect(transportKindOf({ command: 'x' })).toBe('stdio');
    expect(transportKindOf({ url: 'http://h/mcp' })).toBe('http');
    expect(transportKindOf({ command: 'x', url: 'http://h/mcp' })).toBe('stdio');
  });

  it('honours an explicit type and rejects an unknown one', () => {
    expect(transportKindOf({ type: 'sse', url: 'http://h/sse' })).toBe('sse');
    expect(transportKindOf({ type: 'HTTP', url: 'http://h/mcp' })).toBe('http');
    expect(() => transportKindOf({ type: 'carrier-pigeon' })).toThrow(/Unknown transport type/);
  });
});

describe('buildStdioEnv', () => {
  const daemonEnv = { PATH: '/bin', HOME: '/home/me', SECRET_TOKEN: 's3cret', WANTED: 'yes', SHARED: 'daemon' };

  it('passes the safe defaults and the allowlist, nothing else', () => {
    const env = buildStdioEnv({ command: 'x' }, ['WANTED', 'MISSING'], daemonEnv);
    expect(env.WANTED).toBe('yes');
    expect(env).not.toHaveProperty('SECRET_TOKEN');
    expect(env).not.toHaveProperty('MISSING');
    expect(env.PATH).toBe(process.env.PATH); // SDK defaults read the real process env
  });

  it('lets the server config win over the allowlist', () => {
    const env = buildStdioEnv({ command: 'x', env: { SHARED: 'config' } }, ['SHARED'], daemonEnv);
    expect(env.SHARED).toBe('config');
  });
});

describe('isHttpClientError', () => {
  it('is true for a 4xx SdkHttpError only', () => {
    const http = (status: number) => new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'x', { status, statusText: 'x' });
    expect(isHttpClientError(http(404))).toBe(true);
    expect(isHttpClientError(http(405))).toBe(true);
    expect(isHttpClientError(http(500))).toBe(false);
    expect(isHttpClientError(new SdkError(SdkErrorCode.ClientHttpUnexpectedContent, 'content type'))).toBe(false);
    expect(isHttpClientError(new Error('404'))).toBe(false);
  });
});

describe('perRequestSignalFetch', () => {
  it('keeps per-request listeners off the long-lived signal, yet still aborts the request', async () => {
    const longLived = new AbortController();
    const received: AbortSignal[] = [];
    // Like undici: a listener per request on the signal it is given, not removed before GC.
    const base = async (_url: string | URL, init?: RequestInit) => {
      init?.signal?.addEventListener('abort', () => {});
      received.push(init!.signal!);
      return new Response('ok');
    };
    const wrapped = perRequestSignalFetch(base);
    for (let i = 0; i < 20; i++) await wrapped('http://h/', { signal: longLived.signal });
    expect(getEventListeners(longLived.signal, 'abort')).toHaveLength(0);
    expect(new Set(received).size).toBe(20);
    longLived.abort();
    expect(received.every((signal) => signal.aborted)).toBe(true);
  });
});
