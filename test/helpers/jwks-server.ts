import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { onTestFinished } from 'vitest';

/**
 * A stand-in identity provider for the JWT agent tests (issue #40 item 4): a real HTTP server on
 * 127.0.0.1 serving a JWKS (counting its fetches), with signing keys made in the test and a
 * signer for tokens. `rotate()` publishes a new key (new `kid`) in place of the old one. The
 * current kid is the ETag: `If-None-Match` with it answers 304.
 */

export const TEST_ISSUER = 'https://idp.test.example';
export const TEST_AUDIENCE = 'switchboard';

/** The algorithms a test key is made for. ES256 unless a test asks: an RS256 key takes ~50–200 ms of CPU to make, an ES256 one ~1 ms. */
export type SigningAlg = 'ES256' | 'RS256';

export interface SigningKey {
  kid: string;
  alg: SigningAlg;
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** The public key as PEM: what an attacker would use as an HMAC secret. */
  publicPem: string;
}

export interface JwksServer {
  /** `http://127.0.0.1:<port>/jwks.json` */
  url: string;
  /** Requests the JWKS answered so far (304 revalidations included). */
  readonly fetches: number;
  /** The key tokens are signed with now. */
  readonly current: SigningKey;
  /** The `Cache-Control` sent with the JWKS. @default "max-age=300" */
  cacheControl: string;
  /** A new key with a new `kid` becomes the only published one; resolves with it. */
  rotate(): Promise<SigningKey>;
  /** A token signed with the current key (or `key`): `iss`, `aud`, `iat` and a 10-minute `exp` unless `claims` say otherwise. */
  sign(claims: JWTPayload, options?: { key?: SigningKey; kid?: string }): Promise<string>;
  close(): Promise<void>;
}

let kids = 0;

export async function newSigningKey(alg: SigningAlg = 'ES256'): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `test-key-${++kids}`;
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, publicPem: await exportSPKI(publicKey) };
}

/**
 * Starts a JWKS server whose keys are made for `alg` (ES256 by default); closed when the test
 * finishes, or with `lifetime: 'manual'` by the caller (a server shared by the tests of a file, see
 * `sharedByTests`).
 */
export async function startJwksServer(options: { lifetime?: 'test' | 'manual'; alg?: SigningAlg } = {}): Promise<JwksServer> {
  let current = await newSigningKey(options.alg);
  let fetches = 0;
  const state = { cacheControl: 'max-age=300' };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== '/jwks.json') return void res.writeHead(404).end();
    fetches += 1;
    // The kid names the document: an unchanged one is revalidated with a 304.
    const etag = `"${current.kid}"`;
    if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag, 'cache-control': state.cacheControl }).end();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': state.cacheControl, etag });
    res.end(JSON.stringify({ keys: [current.publicJwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = (): Promise<void> => new Promise((resolve) => server.close(() => resolve()));
  if (options.lifetime !== 'manual') onTestFinished(close);
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    get fetches() {
      return fetches;
    },
    get current() {
      return current;
    },
    get cacheControl() {
      return state.cacheControl;
    },
    set cacheControl(value: string) {
      state.cacheControl = value;
    },
    async rotate() {
      current = await newSigningKey(options.alg);
      return current;
    },
    sign(claims, options = {}) {
      const key = options.key ?? current;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: TEST_ISSUER, aud: TEST_AUDIENCE, iat: now, exp: now + 600, ...claims })
        .setProtectedHeader({ alg: key.alg, kid: options.kid ?? key.kid, typ: 'JWT' })
        .sign(key.privateKey);
    },
    close,
  };
}
