import { describe, expect, it } from 'vitest';
import { runLogin, runLogout, runStatus } from '../../src/cli/client/index.js';
import type { LoginIo } from '../../src/cli/client/login.js';
import { deferred } from '../../src/util/deferred.js';
import { startDaemon } from '../helpers/daemon.js';
import { followSignIn, serverStatus, startOAuthFixture } from '../helpers/oauth.js';

/** `switchboard login` / `logout` against a real daemon (issue #16 item 4). */

const TOKEN = 'cli-test-token';

interface Captured {
  io: LoginIo;
  stdout: () => string;
  stderr: () => string;
}

/** Command I/O with captured output; `onStdout` sees each chunk as it is written. */
function capture(argv: string[], extra: Partial<LoginIo> = {}, onStdout: (text: string) => void = () => {}): Captured {
  let stdout = '';
  let stderr = '';
  return {
    io: {
      argv,
      env: {},
      stdout: { write: (chunk: string) => onStdout((stdout += chunk)) },
      stderr: { write: (chunk: string) => (stderr += chunk) },
      ...extra,
    },
    stdout: () => stdout,
    stderr: () => stderr,
  };
}

describe('switchboard login / logout', () => {
  it('prints the URL, hands it to the browser, waits for the callback and reports success; logout signs out; says why when it cannot', async () => {
    const fixture = await startOAuthFixture({ STATIC_TOKEN: 'static' });
    const sb = await startDaemon({
      servers: { remote: { type: 'http', url: fixture.url }, fixed: { type: 'http', url: fixture.url, headers: { Authorization: 'Bearer static' } } },
      config: { token: TOKEN },
    });
    await serverStatus(sb, 'remote', 'needs_auth');
    const connection = ['--url', sb.url, '--token', TOKEN];

    const fixed = capture(['fixed', ...connection, '--no-browser']);
    expect(await runLogin(fixed.io)).toBe(1);
    expect(fixed.stderr()).toMatch(/^switchboard: OAUTH_NOT_APPLICABLE: MCP server "fixed" has its own Authorization header/);
    const nobody = capture(['remote', ...connection, '--no-browser', '--timeout', '0.2']);
    expect(await runLogin(nobody.io)).toBe(1);
    expect(nobody.stdout()).toMatch(/^Waiting for the sign-in to finish/m);
    expect(nobody.stderr()).toBe('switchboard: no answer within 0.2 s\n');

    const shown = deferred<string>();
    const opened: string[] = [];
    const login = capture(['remote', ...connection], { openUrl: (url) => opened.push(url) > 0 }, (text) => {
      const url = /^ {2}(http\S+)$/m.exec(text)?.[1];
      if (url) shown.resolve(url);
    });
    const exit = runLogin(login.io);
    const url = await shown.promise;
    expect(url).toMatch(new RegExp(`^${fixture.origin}/authorize\\?`));
    expect(opened).toEqual([url]);
    // The person signs in; the command notices through the daemon's events.
    expect((await followSignIn(url)).status).toBe(200);
    expect(await exit).toBe(0);
    expect(login.stdout()).toContain('Signed in to "remote": connected, 5 tools.');
    expect(login.stderr()).toBe('');

    const logout = capture(['remote', ...connection]);
    expect(await runLogout(logout.io)).toBe(0);
    expect(logout.stdout()).toMatch(/^signed out of remote: /);
    await serverStatus(sb, 'remote', 'needs_auth');
    const status = capture(connection);
    expect(await runStatus(status.io)).toBe(0);
    // Its tools stay listed (deferred), and the view says what to do.
    expect(status.stdout()).toMatch(/^remote\s+needs_auth \(deferred\)\s+http\s+5\s+Test\s+sign in: switchboard login remote$/m);
  });
});
