import type { FetchLike } from '@modelcontextprotocol/client';
import type { OAuthKey, OAuthStore } from '../../store/ports.js';

/** How long a logout waits for the authorization server to take the tokens back. */
const REVOKE_TIMEOUT_MS = 5_000;

/**
 * Asks the authorization server to revoke the stored tokens (RFC 7009) before they are
 * forgotten: refresh token first (revoking it usually takes its access tokens along), then the
 * access token. Best effort — a server without a revocation endpoint, or one that is down, does
 * not stop a logout; the result says how many tokens the server accepted back.
 */
export async function revokeStoredTokens(store: OAuthStore, key: OAuthKey, fetchFn: FetchLike): Promise<number> {
  const [stored, discovery] = await Promise.all([store.latestTokens(key), store.getDiscovery(key)]);
  const metadata = discovery.state?.authorizationServerMetadata as Record<string, unknown> | undefined;
  const endpoint = metadata?.revocation_endpoint;
  const client = stored && (await store.getClient(key, stored.issuer))?.info;
  if (!stored || typeof endpoint !== 'string' || !client || typeof client.client_id !== 'string') return 0;
  let revoked = 0;
  for (const hint of ['refresh_token', 'access_token'] as const) {
    const token = stored.tokens[hint];
    if (typeof token !== 'string') continue;
    const body = new URLSearchParams({ token, token_type_hint: hint });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (typeof client.client_secret === 'string') {
      headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
    } else {
      body.set('client_id', client.client_id);
    }
    try {
      const response = await fetchFn(endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(REVOKE_TIMEOUT_MS) });
      await response.text().catch(() => '');
      if (response.ok) revoked += 1;
    } catch {
      // Unreachable or slow: the tokens are forgotten here all the same.
    }
  }
  return revoked;
}
