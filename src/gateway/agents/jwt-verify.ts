import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { JWT_ALGORITHMS } from '../../config/agent-auth-schema.js';
import { isSwitchboardError, type ErrorCode } from '../../errors.js';
import type { Clock } from '../../util/clock.js';
import type { JwksSource } from './jwks-source.js';

export interface JwtCheck {
  issuer: string;
  audiences: readonly string[];
  algorithms?: readonly string[];
  clockToleranceSeconds: number;
  keys: JwksSource;
  clock: Pick<Clock, 'now'>;
}

/** A token's verdict: its verified claims, or the one code that says why it is refused. */
export type JwtVerdict = { ok: true; claims: JWTPayload } | { ok: false; code: ErrorCode };

/**
 * Verifies `token` against the provider's keys (issue #40 item 4). The algorithm is checked from
 * the header before any key is touched, so `alg: none` and HMAC (a public key used as a shared
 * secret) are refused as such; an unknown `kid` gets one rate-limited JWKS refresh. Every outcome
 * is a stable code; nothing of the token goes anywhere but this function.
 */
export async function verifyJwt(token: string, check: JwtCheck): Promise<JwtVerdict> {
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    return { ok: false, code: 'JWT_MALFORMED' };
  }
  const algorithms = check.algorithms ?? JWT_ALGORITHMS;
  if (typeof alg !== 'string' || !algorithms.includes(alg)) return { ok: false, code: 'JWT_ALGORITHM_REFUSED' };
  try {
    let keys = await check.keys.keys();
    try {
      return { ok: true, claims: await verifyWith(token, keys, check) };
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      const refreshed = await check.keys.refreshForUnknownKid();
      if (refreshed === undefined) return { ok: false, code: 'JWT_KEY_UNKNOWN' };
      keys = refreshed;
      return { ok: true, claims: await verifyWith(token, keys, check) };
    }
  } catch (err) {
    return { ok: false, code: codeOf(err) };
  }
}

async function verifyWith(token: string, keys: JWTVerifyGetKey, check: JwtCheck): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, keys, {
    issuer: check.issuer,
    audience: [...check.audiences],
    algorithms: [...(check.algorithms ?? JWT_ALGORITHMS)],
    clockTolerance: check.clockToleranceSeconds,
    currentDate: new Date(check.clock.now()),
    requiredClaims: ['exp'],
  });
  const iat = payload.iat;
  // jose checks `iat` only against a maximum age; one in the future is a token not valid yet.
  if (typeof iat === 'number' && iat * 1000 > check.clock.now() + check.clockToleranceSeconds * 1000) {
    throw new errors.JWTClaimValidationFailed('"iat" claim timestamp check failed (in the future)', payload, 'iat', 'check_failed');
  }
  return payload;
}

const CLAIM_CODES: Readonly<Record<string, ErrorCode>> = {
  iss: 'JWT_ISSUER_INVALID',
  aud: 'JWT_AUDIENCE_INVALID',
  nbf: 'JWT_NOT_YET_VALID',
  iat: 'JWT_NOT_YET_VALID',
};

function codeOf(err: unknown): ErrorCode {
  if (isSwitchboardError(err)) return err.code;
  if (err instanceof errors.JWTExpired) return 'JWT_EXPIRED';
  if (err instanceof errors.JWTClaimValidationFailed) return (err.reason === 'check_failed' || err.reason === 'unexpected' ? CLAIM_CODES[err.claim] : undefined) ?? 'JWT_MALFORMED';
  if (err instanceof errors.JWKSNoMatchingKey) return 'JWT_KEY_UNKNOWN';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'JWT_ALGORITHM_REFUSED';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'JWT_SIGNATURE_INVALID';
  return 'JWT_MALFORMED';
}
