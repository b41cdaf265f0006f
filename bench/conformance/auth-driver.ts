/**
 * Makes Switchboard the client under test of the official conformance suite's client-mode auth
 * scenarios (`@modelcontextprotocol/conformance client --scenario auth/…`). The suite starts its
 * own MCP server + authorization server for the scenario and runs this file with that server's
 * URL as the last argument (`MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_CONTEXT` in the env).
 *
 * It runs a real Switchboard daemon in this process (127.0.0.1, random port, temp database) with
 * that one upstream, and then does what a person does: waits for the server's status, and while
 * it is `needs_auth` asks the daemon to sign in (`POST /servers/conf/login`), opens the
 * authorization URL (the suite's authorization server approves at once and redirects to the
 * daemon's `/oauth/callback`), and once connected lists and calls the tools over REST. A call that
 * sends the server back to `needs_auth` (a step-up) is signed in again, a few times at most.
 * Exit 0 when a tool call went through, 1 otherwise. See bench/conformance/README.md.
 */
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { ServerConfig } from '../../src/config/types.js';
import { oneUpstreamDaemon } from './one-upstream-daemon.js';
import type { ServerStatusEvent } from '../../src/events/daemon-events.js';

const SERVER = 'conf';
/** What the suite's authorization servers accept as a Client ID Metadata Document URL. */
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';
const MAX_SIGN_INS = 3;
const WAIT_MS = 20_000;

const serverUrl = process.argv.at(-1);
if (!serverUrl?.startsWith('http')) {
  process.stderr.write('usage: auth-driver.ts <server-url>\n');
  process.exit(2);
}
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
  valid_jwt?: string;
};
const log = (message: string): void => void process.stderr.write(`[driver] ${message}\n`);

/**
 * The `client-credentials-*` scenarios are a daemon with nobody at it (issue #29): grant
 * `client_credentials` with the secret or the private key the scenario hands out, as an operator
 * would write it in the config (the key itself, as `!cmd` or `${VAR}` would give it).
 */
function oauthSettings(): ServerConfig['oauth'] {
  // Workload identity federation: the platform's token for this workload is the grant.
  if (process.env.MCP_CONFORMANCE_SCENARIO === 'auth/wif-jwt-bearer' && context.client_id && context.valid_jwt) {
    return { grant: 'jwt_bearer', clientId: context.client_id, assertion: context.valid_jwt };
  }
  if (process.env.MCP_CONFORMANCE_SCENARIO?.startsWith('auth/client-credentials') && context.client_id) {
    const credential = context.private_key_pem
      ? { privateKeyJwt: context.private_key_pem, ...(context.signing_algorithm ? { signingAlgorithm: context.signing_algorithm as 'ES256' } : {}) }
      : { clientSecret: context.client_secret ?? '' };
    return { grant: 'client_credentials', clientId: context.client_id, ...credential };
  }
  if (context.client_id) return { clientId: context.client_id, ...(context.client_secret ? { clientSecret: context.client_secret } : {}) };
  return { clientMetadataUrl: CIMD_URL };
}

const upstream: ServerConfig = { type: 'http', url: serverUrl, oauth: oauthSettings() };

const { daemon, dir, host } = await oneUpstreamDaemon(SERVER, upstream);

/**
 * The next status of the server that is not a step on the way (connecting, reconnecting); with
 * `now`, the current one when it already is such a status.
 */
function settled(now = false): Promise<ServerStatusEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no settled status within ${WAIT_MS} ms`)), WAIT_MS);
    const current = daemon.manager.getServer(SERVER);
    const done = (event: ServerStatusEvent): void => {
      clearTimeout(timer);
      off();
      resolve(event);
    };
    const off = daemon.bus.subscribe((event) => {
      if (event.type === 'server.status' && event.server === SERVER && !['connecting', 'reconnecting'].includes(event.status)) done(event);
    });
    if (now && current && !['connecting', 'reconnecting'].includes(current.status)) {
      done({
        type: 'server.status',
        server: SERVER,
        status: current.status,
        previous: current.status,
        toolCount: current.toolCount,
        ...(current.lastError ? { error: current.lastError } : {}),
      });
    }
  });
}

async function signIn(base: string): Promise<void> {
  const login = await fetch(`${base}/servers/${SERVER}/login`, { method: 'POST' });
  const body = (await login.json()) as { authorizationUrl?: string; error?: { code: string; message: string } };
  if (!body.authorizationUrl) throw new Error(`login: ${body.error?.code}: ${body.error?.message}`);
  const approval = await fetch(body.authorizationUrl, { redirect: 'manual' });
  await approval.text();
  const location = approval.headers.get('location');
  if (!location) throw new Error(`the authorization server answered ${approval.status} without a redirect`);
  const callback = await fetch(location);
  log(`callback: HTTP ${callback.status} ${callback.status === 200 ? '' : await callback.text()}`);
}

let ok = false;
try {
  await daemon.app.listen({ host, port: 0 });
  const base = `http://127.0.0.1:${(daemon.app.server.address() as AddressInfo).port}`;
  await daemon.start();
  let status = await settled(true);
  for (let signIns = 0; !ok && signIns <= MAX_SIGN_INS;) {
    log(`status ${status.status}${status.error ? ` (${status.error.code}: ${status.error.message})` : ''}`);
    if (status.status === 'needs_auth') {
      if (signIns === MAX_SIGN_INS) break;
      signIns += 1;
      const next = settled();
      await signIn(base);
      status = await next;
      continue;
    }
    if (status.status !== 'connected') break;
    const { tools } = (await (await fetch(`${base}/tools?server=${SERVER}`)).json()) as { tools: Array<{ name: string }> };
    const tool = tools.find((t) => t.name.endsWith('test-tool')) ?? tools[0];
    if (!tool) break;
    const next = settled();
    const result = (await (
      await fetch(`${base}/tools/${encodeURIComponent(tool.name)}/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"arguments":{}}' })
    ).json()) as {
      isError?: boolean;
      content?: Array<{ text?: string }>;
    };
    log(`call ${tool.name}: ${result.isError ? `error ${result.content?.[0]?.text}` : 'ok'}`);
    if (!result.isError) ok = true;
    else status = await next;
  }
} catch (err) {
  log(`failed: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  await daemon.close();
  await rm(dir, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
