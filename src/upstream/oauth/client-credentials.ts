import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import type { AddClientAuthentication, OAuthClientMetadata } from '@modelcontextprotocol/client';
import { isJwt } from '../../config/secret-values.js';
import type { ServerOAuthConfig } from '../../config/types.js';
import { loadSdk } from '../sdk.js';

/**
 * The unattended sign-in of issue #29: the OAuth 2.1 `client_credentials` grant, the client
 * authenticated by its secret (`client_secret_basic` / `client_secret_post`) or by an RFC 7523
 * assertion signed with its private key (`private_key_jwt`). The SDK runs the grant (its
 * `prepareTokenRequest` seam) and signs the assertion (`createPrivateKeyJwtAuth`); this module
 * only turns our config into what those seams take. Nothing here ever puts a secret or a key
 * into an error message.
 */

type Alg = NonNullable<ServerOAuthConfig['signingAlgorithm']>;

/** Whether the server's tokens come from the daemon itself, with nobody to sign in. */
export function isUnattended(settings: ServerOAuthConfig | undefined): boolean {
  return settings?.grant === 'client_credentials' || settings?.grant === 'jwt_bearer';
}

const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The client's metadata: no redirect URI (nobody comes back from a browser), one grant. */
export function unattendedMetadata(settings: ServerOAuthConfig): OAuthClientMetadata {
  const scopes = settings.scopes;
  const secretMethod = settings.clientSecret ? (settings.tokenEndpointAuthMethod ?? 'client_secret_basic') : 'none';
  return {
    client_name: 'Switchboard',
    redirect_uris: [],
    grant_types: [settings.grant === 'jwt_bearer' ? JWT_BEARER_GRANT : 'client_credentials'],
    token_endpoint_auth_method: settings.privateKeyJwt ? 'private_key_jwt' : secretMethod,
    ...(scopes && scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
  };
}

/**
 * The client information the SDK authenticates with. A configured `tokenEndpointAuthMethod` is
 * what the SDK uses when the authorization server lists it; without one the SDK picks from the
 * server's `token_endpoint_auth_methods_supported` (basic first). With a private key there is no
 * secret: `addClientAuthentication` adds the assertion instead.
 */
export function unattendedClientInfo(settings: ServerOAuthConfig, server: string): Record<string, string> {
  if (!settings.clientId) throw new Error(`MCP server "${server}" has grant "client_credentials" but no oauth.clientId`);
  if (settings.privateKeyJwt) return { client_id: settings.clientId, token_endpoint_auth_method: 'private_key_jwt' };
  // The workload's token is the grant; the client itself may be public (RFC 7523 §3.1).
  if (settings.grant === 'jwt_bearer' && !settings.clientSecret) return { client_id: settings.clientId, token_endpoint_auth_method: 'none' };
  if (!settings.clientSecret) throw new Error(`the oauth.clientSecret of MCP server "${server}" could not be resolved (see the warning about it)`);
  return {
    client_id: settings.clientId,
    client_secret: settings.clientSecret,
    ...(settings.tokenEndpointAuthMethod ? { token_endpoint_auth_method: settings.tokenEndpointAuthMethod } : {}),
  };
}

/**
 * The token request of the grant, with the scope the SDK chose: `client_credentials` (OAuth 2.1
 * §4.2), or the JWT-bearer grant (RFC 7523 §2.1) with the workload's token, read afresh.
 */
export async function unattendedRequest(settings: ServerOAuthConfig, server: string, scope: string | undefined): Promise<URLSearchParams> {
  const params =
    settings.grant === 'jwt_bearer'
      ? new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion: await readAssertion(settings.assertion ?? '', server) })
      : new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope) params.set('scope', scope);
  return params;
}

/**
 * The workload identity token: the value itself when it is a JWT (from `!cmd` or `${VAR}`),
 * else the file it names, read on every token request, since platforms rotate it there.
 */
async function readAssertion(value: string, server: string): Promise<string> {
  const text = value.trim();
  if (isJwt(text)) return text;
  const path = text.startsWith('~/') ? homedir() + text.slice(1) : text;
  const read = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new Error(`the oauth.assertion of MCP server "${server}" could not be read from its file (${err.code ?? 'error'})`);
  });
  if (!isJwt(read.trim())) throw new Error(`the oauth.assertion file of MCP server "${server}" holds no JWT`);
  return read.trim();
}

/**
 * Adds a fresh RFC 7523 client assertion (`iss` = `sub` = client id, `aud` = the issuer, a new
 * `jti`, five minutes of life) to every token request. The key is read once, on first use.
 */
export function privateKeyJwtAuth(settings: ServerOAuthConfig, server: string): AddClientAuthentication {
  let signer: Promise<AddClientAuthentication> | undefined;
  return async (headers, params, url, metadata) => {
    signer ??= Promise.all([loadAssertionKey(settings.privateKeyJwt ?? '', server, settings.signingAlgorithm), loadSdk()]).then(([{ jwk, alg }, { createPrivateKeyJwtAuth }]) =>
      createPrivateKeyJwtAuth({ issuer: settings.clientId ?? '', subject: settings.clientId ?? '', privateKey: jwk as Record<string, unknown>, alg }),
    );
    // A key that could not be read is tried again on the next request (the file may be fixed).
    const sign = await signer.catch((err: unknown) => {
      signer = undefined;
      throw err;
    });
    await sign(headers, params, url, metadata);
  };
}

/**
 * The private key as a JWK with its algorithm. `value` is the key itself (PEM, or JWK JSON —
 * what a `!cmd` or `${VAR}` gives) or the path of a file holding it. Passing the SDK a JWK
 * rather than PEM lets PKCS#1 and SEC1 files and Ed25519 keys work too.
 */
export async function loadAssertionKey(value: string, server: string, alg?: Alg): Promise<{ jwk: JsonWebKey; alg: Alg }> {
  const what = `the oauth.privateKeyJwt key of MCP server "${server}"`;
  let text = value.trim();
  if (!text.startsWith('-----BEGIN') && !text.startsWith('{')) {
    const path = text.startsWith('~/') ? homedir() + text.slice(1) : text;
    try {
      text = (await readFile(path, 'utf8')).trim();
    } catch (err) {
      throw new Error(`${what} could not be read from its file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  let key: KeyObject;
  try {
    key = text.startsWith('{') ? createPrivateKey({ key: JSON.parse(text) as JsonWebKey, format: 'jwk' }) : createPrivateKey(text);
  } catch {
    throw new Error(`${what} is not a private key (PEM or JWK)`);
  }
  const own = algorithmOf(key);
  if (!own) throw new Error(`${what} is a ${key.asymmetricKeyType ?? 'unknown'} key, which cannot sign a client assertion`);
  return { jwk: key.export({ format: 'jwk' }), alg: alg ?? own };
}

const EC_ALGS: Readonly<Record<string, Alg>> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

function algorithmOf(key: KeyObject): Alg | undefined {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256';
    case 'rsa-pss':
      return 'PS256';
    case 'ed25519':
      return 'EdDSA';
    case 'ec':
      return EC_ALGS[key.asymmetricKeyDetails?.namedCurve ?? ''];
    default:
      return undefined;
  }
}
