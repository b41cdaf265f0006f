import { AGENT_NAME } from '../../config/agent-schema.js';
import type { JwtAuthConfig } from '../../config/agent-auth-schema.js';
import type { AgentAccess, AgentScope } from './agent-view.js';

/**
 * From a verified token's claims to an agent (issue #40 item 4): its name (`agentAuth.jwt.agent`)
 * and its scope (`agentAuth.jwt.view`, capped by `agentAuth.jwt.access`). Pure functions.
 */

type Claims = Readonly<Record<string, unknown>>;

/**
 * The value at `path`: the whole path as one claim name first (`https://example.com/roles`),
 * else the longest dotted prefix naming an object, then the rest inside it
 * (`kubernetes.io.serviceaccount.name` → `claims["kubernetes.io"].serviceaccount.name`).
 */
export function claimAt(claims: unknown, path: string): unknown {
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return undefined;
  const record = claims as Claims;
  if (Object.hasOwn(record, path)) return record[path];
  const parts = path.split('.');
  for (let cut = parts.length - 1; cut >= 1; cut -= 1) {
    const head = parts.slice(0, cut).join('.');
    if (Object.hasOwn(record, head)) return claimAt(record[head], parts.slice(cut).join('.'));
  }
  return undefined;
}

const PLACEHOLDER = /\{([^{}]+)\}/g;

/** The agent's name from `template` (a claim, or claims in braces); undefined when missing or not a valid agent name. */
export function agentNameOf(claims: Claims, template: string): string | undefined {
  let name: string | undefined;
  if (!template.includes('{')) {
    const value = claimAt(claims, template);
    name = typeof value === 'string' ? value : undefined;
  } else {
    let missing = false;
    name = template.replace(PLACEHOLDER, (_, path: string) => {
      const value = claimAt(claims, path);
      if (typeof value === 'string' || typeof value === 'number') return String(value);
      missing = true;
      return '';
    });
    if (missing) name = undefined;
  }
  return name !== undefined && AGENT_NAME.test(name) ? name : undefined;
}

const ACCESS_RANK: Readonly<Record<AgentAccess, number>> = { read: 0, write: 1, all: 2 };

/** The agent's scope from its claims: each mapped part read from its claim, access never above the ceiling. */
export function scopeOf(claims: Claims, config: Pick<JwtAuthConfig, 'view' | 'access'>): AgentScope {
  const view = config.view ?? {};
  const ceiling = config.access ?? 'all';
  const scope: { -readonly [K in keyof AgentScope]: AgentScope[K] } = {};
  // A mapped allow list the token lacks allows nothing: a token that says nothing gets nothing.
  if (view.servers !== undefined) scope.servers = globsOf(claimAt(claims, view.servers)) ?? [];
  if (view.tools !== undefined) scope.tools = globsOf(claimAt(claims, view.tools)) ?? [];
  if (view.exclude !== undefined) {
    const exclude = globsOf(claimAt(claims, view.exclude));
    if (exclude !== undefined) scope.exclude = exclude;
  }
  const claimed = view.access === undefined ? undefined : accessOf(claimAt(claims, view.access));
  const access = claimed !== undefined && ACCESS_RANK[claimed] < ACCESS_RANK[ceiling] ? claimed : ceiling;
  if (access !== 'all') scope.access = access;
  return scope;
}

/** A list of globs: an array of strings, or one space-separated string (as `scope` is). */
function globsOf(value: unknown): string[] | undefined {
  if (typeof value === 'string') return value.split(/\s+/).filter((glob) => glob.length > 0);
  if (Array.isArray(value)) return value.filter((glob): glob is string => typeof glob === 'string' && glob.length > 0);
  return undefined;
}

/** A claimed access tier; a value that is none of them counts as the narrowest. */
function accessOf(value: unknown): AgentAccess | undefined {
  if (value === undefined) return undefined;
  return value === 'write' || value === 'all' ? value : 'read';
}
