import { createHash, webcrypto } from 'node:crypto';
import type { DpopKeyPair, DpopSession, StoredOAuthTokens } from '@modelcontextprotocol/client';
import type { OAuthKey, OAuthStore } from '../../store/ports.js';
import { loadSdk } from '../sdk.js';

type JsonWebKey = webcrypto.JsonWebKey;

/**
 * DPoP keys (RFC 9449, issue #29 item 2). The SDK signs the proofs, retries nonce challenges and
 * presents `DPoP` tokens once the provider hands it a `DpopSession`; what is ours is the key: one
 * per upstream, kept in the store with the tokens bound to it (as the private JWK, under this
 * field of the stored token record), so a restart still holds the key its tokens need. A new
 * key comes with a new grant; forgetting the tokens forgets their key.
 */
export const DPOP_KEY_FIELD = 'switchboard_dpop_jwk';

const P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;

export interface DpopIdentity {
  session: DpopSession;
  /** The private JWK, to be stored with the tokens the session binds. */
  jwk: JsonWebKey;
}

/** The session for the key stored with `tokens`, or for a new key when there is none (or it is unusable). */
export async function dpopIdentity(tokens: Record<string, unknown> | undefined): Promise<DpopIdentity> {
  const { DpopSession, generateDpopKeyPair } = await loadSdk();
  const stored = tokens?.[DPOP_KEY_FIELD] as JsonWebKey | undefined;
  if (stored) {
    const pair = await keyPairOf(stored).catch(() => undefined);
    if (pair) return { session: await DpopSession.create({ keyPair: pair }), jwk: stored };
  }
  const pair = await generateDpopKeyPair({ alg: 'ES256', extractable: true });
  const jwk = await webcrypto.subtle.exportKey('jwk', pair.privateKey as webcrypto.CryptoKey);
  return { session: await DpopSession.create({ keyPair: pair }), jwk };
}

/**
 * The session a provider hands the SDK: where the authorization server advertises DPoP
 * (`dpop_signing_alg_values_supported` with ES256), or where the stored tokens are bound to a
 * key already; else undefined, and tokens stay Bearer.
 */
export async function dpopSessionFor(store: OAuthStore, key: OAuthKey, identity: (key: OAuthKey) => Promise<DpopIdentity>): Promise<DpopSession | undefined> {
  const metadata = (await store.getDiscovery(key)).state?.authorizationServerMetadata as Record<string, unknown> | undefined;
  const algs = metadata?.dpop_signing_alg_values_supported;
  const advertised = Array.isArray(algs) && algs.includes('ES256');
  if (!advertised && (await store.latestTokens(key))?.tokens[DPOP_KEY_FIELD] === undefined) return undefined;
  return (await identity(key)).session;
}

/** Whether the authorization server issued a sender-constrained token (RFC 9449 §5). */
export function isDpopBound(tokens: Record<string, unknown>): boolean {
  return typeof tokens.token_type === 'string' && tokens.token_type.toLowerCase() === 'dpop';
}

/** The tokens as the SDK sees them: without the key kept beside them. */
export function withoutDpopKey(tokens: StoredOAuthTokens): StoredOAuthTokens {
  const { [DPOP_KEY_FIELD]: _key, ...rest } = tokens as StoredOAuthTokens & Record<string, unknown>;
  return rest as StoredOAuthTokens;
}

async function keyPairOf(jwk: JsonWebKey): Promise<DpopKeyPair> {
  const { crv, kty, x, y } = jwk;
  if (kty !== 'EC' || crv !== 'P-256' || !x || !y) throw new Error('not a P-256 key');
  const publicJwk = { crv, kty, x, y };
  const [privateKey, publicKey] = await Promise.all([
    webcrypto.subtle.importKey('jwk', jwk, P256, true, ['sign']),
    webcrypto.subtle.importKey('jwk', publicJwk, P256, true, ['verify']),
  ]);
  // RFC 7638: the SHA-256 of the required members, in lexical order, without whitespace.
  const thumbprint = createHash('sha256').update(JSON.stringify(publicJwk)).digest('base64url');
  return { privateKey, publicKey, publicJwk, thumbprint, alg: 'ES256' };
}
