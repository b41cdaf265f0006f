import { describe, expect, it } from 'vitest';
import { describeListenFailure, holderIsSwitchboard } from '../../../src/cli/listen-failure.js';

/** A listen error as node gives it. */
function listenError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`listen ${code}: address 127.0.0.1:7337`), { code });
}

/** A fetch that answers every request with `body` (and records the URL asked for). */
function answering(status: number, body: string, asked: string[] = []): typeof fetch {
  return (input) => {
    asked.push(String(input));
    return Promise.resolve(new Response(body, { status, headers: { 'content-type': 'application/json' } }));
  };
}

describe('describeListenFailure', () => {
  it('names another Switchboard when the holder answers /health as one does, asking its loopback address', async () => {
    const asked: string[] = [];
    const message = await describeListenFailure(listenError('EADDRINUSE'), '0.0.0.0', 7337, answering(200, '{"status":"ok"}', asked));
    expect(asked).toEqual(['http://127.0.0.1:7337/health']);
    expect(message).toMatch(/^port 7337 is in use by another Switchboard \(http:\/\/127\.0\.0\.1:7337\/health answers\)/);
    expect(message).toContain('switchboard status --url http://127.0.0.1:7337');
  });

  it('calls anything else another program: another body, another status, no answer at all', async () => {
    const other = 'port 7337 on ::1 is in use by another program: stop it, or start Switchboard with --port <other> (or "port" in its config file)';
    const asked: string[] = [];
    expect(await describeListenFailure(listenError('EADDRINUSE'), '::1', 7337, answering(200, '{"status":"up"}', asked))).toBe(other);
    expect(asked).toEqual(['http://[::1]:7337/health']);
    expect(await describeListenFailure(listenError('EADDRINUSE'), '::1', 7337, answering(404, 'nope'))).toBe(other);
    expect(await describeListenFailure(listenError('EADDRINUSE'), '::1', 7337, () => Promise.reject(new Error('ECONNRESET')))).toBe(other);
    expect(await holderIsSwitchboard('127.0.0.1', 7337, answering(200, 'not json'))).toBe(false);
  });

  it('waits past a second for a busy holder: one answering /health after 1.2 s is still a Switchboard', async () => {
    // A real wait, not the clock: the probe's deadline is AbortSignal.timeout. Both are timers of
    // this process, so the answer's (1.2 s) always fires before the deadline's (3 s).
    const slow: typeof fetch = (_input, init) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve(new Response('{"status":"ok"}', { status: 200 })), 1_200);
        init?.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(init.signal?.reason);
        });
      });
    expect(await holderIsSwitchboard('127.0.0.1', 7337, slow)).toBe(true);
  });

  it('says what to do about the other listen errors', async () => {
    expect(await describeListenFailure(listenError('EACCES'), '127.0.0.1', 80)).toMatch(/^cannot listen on 127\.0\.0\.1:80: permission denied/);
    expect(await describeListenFailure(listenError('EADDRNOTAVAIL'), '10.9.9.9', 7337)).toMatch(/no such address on this machine \(check --host\)$/);
    expect(await describeListenFailure(listenError('EINVAL'), '127.0.0.1', 7337)).toBe('cannot listen on 127.0.0.1:7337: listen EINVAL: address 127.0.0.1:7337');
  });
});
