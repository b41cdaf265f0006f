import { z } from 'zod';
import { AGENT_ACCESS } from './agent-schema.js';

/**
 * `agentAuth` (issue #40 item 4): agents that sign in with a JWT from the operator's identity
 * provider instead of a Switchboard key. This file only parses and validates; the gateway's
 * agents room (gateway/agents/jwt-agents.ts) verifies tokens and maps their claims.
 */

/** The signing algorithms a token may use: asymmetric only, so `none` and HMAC never verify. */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;

/**
 * A claim, by name or by path: `sub`, `https://example.com/roles` (a name with dots or slashes
 * is looked up whole first), `kubernetes.io.serviceaccount.name` (nested objects).
 */
const ClaimSchema = z.string().min(1, 'a claim name must not be empty');

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** https, or http to this machine only: the keys decide who is an agent and must not be swapped on the way. */
const JwksUrlSchema = z.url({ protocol: /^https?$/, error: 'jwksUrl must be an http(s) URL' }).refine(
  (url) => {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || LOOPBACK.has(parsed.hostname);
  },
  { error: 'jwksUrl must be https (plain http only to 127.0.0.1, localhost or [::1])' },
);

export const JwtAuthSchema = z
  .object({
    /** The `iss` every token must carry, exactly. */
    issuer: z.string().min(1, 'issuer must not be empty'),
    /** A token's `aud` must name at least one of these. */
    audiences: z.array(z.string().min(1)).min(1, 'audiences must name at least one audience'),
    /** Where the provider publishes its keys; fetched on first use, cached by its Cache-Control, refreshed for an unknown `kid`. */
    jwksUrl: JwksUrlSchema.optional(),
    /** A JWKS file on this machine instead of `jwksUrl`; re-read like a fetched one. */
    jwksFile: z.string().min(1).optional(),
    /**
     * The agent's name: a claim whose value is the name, or a template of claims in braces
     * (`"{kubernetes.io.namespace}.{kubernetes.io.serviceaccount.name}"`). The result must be a
     * valid agent name (letters, digits, `.`, `_`, `-`), else 401 `JWT_AGENT_INVALID`.
     * @default "sub"
     */
    agent: z.string().min(1).default('sub'),
    /**
     * The agent's view from claims: each names the claim holding that part of the scope (a list
     * of globs, or one space-separated string). A mapped claim the token lacks gives nothing
     * (`servers`, `tools`: no server, no tool). @default no view claims: every server and tool
     */
    view: z
      .object({
        servers: ClaimSchema.optional(),
        tools: ClaimSchema.optional(),
        exclude: ClaimSchema.optional(),
        /** A claim holding `read`, `write` or `all`; any other value counts as `read`. */
        access: ClaimSchema.optional(),
      })
      .strict()
      .optional(),
    /** The most a token's agent may do (its view's access is never wider), and its access when no claim says. @default "all" */
    access: z.enum(AGENT_ACCESS, { error: 'access must be "read", "write" or "all"' }).optional(),
    /** Accepted signing algorithms (asymmetric ones only). @default every one of JWT_ALGORITHMS */
    algorithms: z
      .array(z.enum(JWT_ALGORITHMS, { error: `algorithms are among ${JWT_ALGORITHMS.join(', ')}` }))
      .min(1)
      .optional(),
    /** Leeway for `exp`, `nbf` and `iat` against the daemon's clock. @default 30 */
    clockToleranceSeconds: z.number().int().nonnegative().max(300).default(30),
  })
  .strict()
  .refine((jwt) => (jwt.jwksUrl === undefined) !== (jwt.jwksFile === undefined), { error: 'give exactly one of jwksUrl and jwksFile' });

export const AgentAuthSchema = z
  .object({
    /** Agents signed in by a JWT from the operator's identity provider (issue #40 item 4). */
    jwt: JwtAuthSchema.optional(),
  })
  .strict();

export type JwtAuthConfig = z.infer<typeof JwtAuthSchema>;
export type AgentAuthConfig = z.infer<typeof AgentAuthSchema>;
