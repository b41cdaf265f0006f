import { onTestFinished } from 'vitest';
import { startFixtureHttp } from './fixtures.js';

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

export async function startOAuthFixture(env: Record<string, string> = {}): Promise<OAuthFixture> {
  const http = await startFixtureHttp('oauth-http', { env });
  onTestFinished(() => http.close());
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
