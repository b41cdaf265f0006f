import type { WebSocket } from 'ws';
import { expect, onTestFinished } from 'vitest';
import type { TestDaemon } from './daemon.js';
import { received } from './events.js';
import { startFixtureHttp } from './fixtures.js';
import type { Cleanup } from './process.js';
import { waitForStatus } from './status-watch.js';

/**
 * The oauth-http fixture (an MCP server and its authorization server on one origin) and the
 * person in front of the browser: `followSignIn` opens an authorization URL the way a browser
 * would, the fixture approves at once, and the redirect lands on the daemon's /oauth/callback.
 */

export interface OAuthFixtureState {
  sessions: number;
  unauthorized: number;
  forbidden: number;
  requests: number;
  /** GETs without a session: what a fallback to legacy SSE would send. */
  sseAttempts: number;
  authorizationHeaders: string[];
  clients: string[];
  as: {
    registrations: number;
    authorizeRequests: number;
    codeGrants: number;
    refreshGrants: number;
    rejectedRefreshes: number;
    revocations: number;
    foreignClientIds: string[];
    tokenAuthMethods: string[];
    requestedScopes: string[];
    resources: string[];
  };
}

export interface OAuthFixture {
  /** The MCP endpoint, `<origin>/mcp`. */
  url: string;
  /** The issuer. */
  origin: string;
  state(): Promise<OAuthFixtureState>;
  /** Every token, code, client secret and PKCE verifier the fixture issued or saw. */
  secrets(): Promise<string[]>;
  /** Makes every access token invalid (the next request gets 401; refresh tokens still work). */
  expireAccessTokens(): Promise<void>;
  /** Revokes every access and refresh token. */
  revokeAll(): Promise<void>;
  close(): Promise<void>;
}

/** The oauth-http fixture, closed when the test finishes (or by `cleanup`). */
export async function startOAuthFixture(env: Record<string, string> = {}, cleanup: Cleanup = onTestFinished): Promise<OAuthFixture> {
  const http = await startFixtureHttp('oauth-http', { env, cleanup });
  const origin = new URL(http.url).origin;
  const get = async <T>(path: string, method = 'GET'): Promise<T> => (await (await fetch(origin + path, { method })).json()) as T;
  return {
    url: http.url,
    origin,
    state: () => get<OAuthFixtureState>('/admin/state'),
    secrets: () => get<string[]>('/admin/secrets'),
    expireAccessTokens: async () => void (await get('/admin/expire-access', 'POST')),
    revokeAll: async () => void (await get('/admin/revoke-all', 'POST')),
    close: () => http.close(),
  };
}

/**
 * Opens `authorizationUrl` like a browser: the fixture's authorize endpoint redirects to the
 * daemon's callback with `code` and `state`, and the daemon's answer is returned.
 */
export async function followSignIn(authorizationUrl: string): Promise<{ status: number; text: string; callbackUrl: string }> {
  const approval = await fetch(authorizationUrl, { redirect: 'manual' });
  await approval.text();
  const location = approval.headers.get('location');
  if (approval.status !== 302 || !location) throw new Error(`the authorization server did not redirect (HTTP ${approval.status})`);
  const callback = await fetch(location);
  return { status: callback.status, text: await callback.text(), callbackUrl: location };
}

/** A server row of `/status`, as the OAuth tests read it. */
export interface ServerRow {
  name: string;
  status: string;
  transport: string;
  toolCount: number;
  deferred: boolean;
  lastError: { code: string; message: string } | null;
}

/** The bearer header a test daemon wants, if it has a token. */
export function authHeaders(sb: TestDaemon): Record<string, string> {
  return sb.config.token === undefined ? {} : { authorization: `Bearer ${sb.config.token}` };
}

/** Resolves with `name`'s row once its status is `status` (waiting on /events, no polling). */
export async function serverStatus(sb: TestDaemon, name: string, status: string): Promise<ServerRow> {
  const seen = await waitForStatus<{ servers: ServerRow[] }>(sb.url, (s) => s.servers.some((row) => row.name === name && row.status === status), {
    headers: authHeaders(sb),
  });
  return seen.servers.find((row) => row.name === name) as ServerRow;
}

/** The whole sign-in of `name` as a person does it: `login`, the browser round trip, connected. */
export async function signIn(sb: TestDaemon, name: string): Promise<void> {
  await serverStatus(sb, name, 'needs_auth');
  const login = await sb.json<{ authorizationUrl: string }>(`/servers/${name}/login`, { method: 'POST' });
  if (login.status !== 200) throw new Error(`login answered HTTP ${login.status}: ${JSON.stringify(login.body)}`);
  const callback = await followSignIn(login.body.authorizationUrl);
  if (callback.status !== 200) throw new Error(`the callback answered HTTP ${callback.status}: ${callback.text}`);
  await serverStatus(sb, name, 'connected');
}

/** A tool call over REST, with its result. */
export async function callTool(sb: TestDaemon, tool: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const res = await sb.json<ToolResult>(`/tools/${tool}/call`, { method: 'POST', body: { arguments: args } });
  return res.body;
}

/** What the OAuth fixture's `whoami` tool says about the token it was called with. */
export interface Whoami {
  /** The token's sequence number: a new token (refresh, sign-in) has a higher one. */
  seq: number;
  clientId: string;
  scopes: string[];
}

/** Calls `mcp_<server>_whoami` over REST; fails the test when the call is an error. */
export async function whoami(sb: TestDaemon, server = 'remote'): Promise<Whoami> {
  const result = await callTool(sb, `mcp_${server}_whoami`);
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  return JSON.parse(result.content[0]?.text ?? '{}') as Whoami;
}

export interface ToolResult {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
  _meta?: Record<string, { code?: string } | undefined>;
}

/**
 * Everything the daemon shows the outside, each as text, for a secret scan: its log, the REST
 * reads (`/status`, `/servers`, each `extraPaths`, `/tools`, `/metrics`), the `/events` feed so far
 * and what reached the console.
 */
export async function outwardText(sb: TestDaemon, events: WebSocket, console: readonly string[], extraPaths: readonly string[] = []): Promise<Record<string, string>> {
  const read = async (path: string): Promise<string> => (await sb.fetch(path)).text();
  const outputs: Record<string, string> = { logs: sb.logs.text(), status: await read('/status'), servers: await read('/servers') };
  for (const path of extraPaths) outputs[path] = await read(path);
  return { ...outputs, tools: await read('/tools'), metrics: await read('/metrics'), events: JSON.stringify(received(events)), console: console.join('\n') };
}
