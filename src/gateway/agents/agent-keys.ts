import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AgentSettings } from '../../config/agent-schema.js';

/**
 * Agent keys (issue #22): `sbk_<id>_<secret>`. The id (8 random bytes, hex) finds the one stored
 * record without a scan; the secret (32 random bytes, base64url) is checked against a salted
 * SHA-256, compared in constant time. A slow password hash buys nothing for 256 random bits, and
 * a fast one keeps the check cheap enough to run on every request.
 */

export const AGENT_KEY_PREFIX = 'sbk_';
const KEY_SHAPE = /^sbk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface MintedKey {
  /** The key, shown once and then only its hash is kept. */
  key: string;
  id: string;
  salt: Buffer;
  hash: Buffer;
}

/** A fresh key and what is kept of it. */
export function mintAgentKey(): MintedKey {
  const id = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const salt = randomBytes(16);
  return { key: `${AGENT_KEY_PREFIX}${id}_${secret}`, id, salt, hash: saltedHash(salt, secret) };
}

/** The id and secret of a well-formed `sbk_` key, or undefined. */
export function parseAgentKey(key: string): { id: string; secret: string } | undefined {
  const match = KEY_SHAPE.exec(key);
  return match ? { id: match[1] as string, secret: match[2] as string } : undefined;
}

/** Whether `secret` is the one `hash` was made from with `salt`, in constant time. */
export function secretMatches(secret: string, salt: Buffer, hash: Buffer): boolean {
  const candidate = saltedHash(salt, secret);
  return candidate.length === hash.length && timingSafeEqual(candidate, hash);
}

/** A fixed-size digest of any presented value: map lookups and comparisons never see the clear value. */
export function digestOf(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** A random operator key for a daemon without a `token` (see operator-key.ts). */
export function mintOperatorKey(): string {
  return `sbo_${randomBytes(32).toString('base64url')}`;
}

function saltedHash(salt: Buffer, secret: string): Buffer {
  return createHash('sha256').update(salt).update(secret, 'utf8').digest();
}

export function isExpired(settings: AgentSettings, now: number): boolean {
  return settings.expiresAt !== undefined && expiryOf(settings.expiresAt) <= now;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** When `expiresAt` passes: a date alone means the end of that day (UTC), not its first instant. */
export function expiryOf(expiresAt: string): number {
  const at = Date.parse(expiresAt);
  return DATE_ONLY.test(expiresAt) ? at + 24 * 60 * 60 * 1000 : at;
}
