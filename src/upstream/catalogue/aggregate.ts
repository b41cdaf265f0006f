import type { ServerCapabilities } from '@modelcontextprotocol/client';
import type { ProtocolEra } from '../transport/protocol-era.js';
import { UI_EXTENSION } from '../transport/ui-extension.js';
import type { ServerShare } from './catalogues.js';

/** Which optional MCP capabilities at least one server has. */
export interface AggregateCapabilities {
  prompts: boolean;
  resources: boolean;
  /** Some server accepts `resources/subscribe`. */
  subscribe: boolean;
  completions: boolean;
  logging: boolean;
  /** Some server declares the MCP Apps extension (`io.modelcontextprotocol/ui`, issue #41). */
  apps: boolean;
}

export interface ListHintsAggregate {
  ttlMs: number;
  cacheScope: 'public' | 'private';
}

/**
 * What the servers can do, together: the capabilities `/mcp` advertises (SPEC §7), in the
 * agent's era whatever the server's (issue #21): what some server declared, and what a
 * 2026-07-28 server has by its era — servers in use answer completions, log when a request asks
 * for a level, and take resource subscriptions on their listen stream without declaring any of
 * it (the conformance suite's reference server among them). Switchboard keeps a 2025 session's
 * level itself and sends it with each request. A server keeps what it declared while it
 * reconnects, so a blip does not change the advertisement.
 */
export function aggregateCapabilities(
  upstreams: Iterable<{ readonly capabilities: ServerCapabilities | undefined; readonly era?: ProtocolEra | undefined }>,
): AggregateCapabilities {
  const all: AggregateCapabilities = { prompts: false, resources: false, subscribe: false, completions: false, logging: false, apps: false };
  for (const upstream of upstreams) {
    const declared = upstream.capabilities;
    if (!declared) continue;
    const modern = upstream.era === 'modern';
    all.prompts ||= declared.prompts !== undefined;
    all.resources ||= declared.resources !== undefined;
    all.subscribe ||= declared.resources?.subscribe === true || (modern && declared.resources !== undefined);
    all.completions ||= declared.completions !== undefined || (modern && (declared.prompts !== undefined || declared.resources !== undefined));
    all.logging ||= declared.logging !== undefined || modern;
    all.apps ||= declared.extensions?.[UI_EXTENSION] !== undefined;
  }
  return all;
}

/**
 * Caching hints for the aggregated list (2026-07-28): the smallest non-zero `ttlMs` any
 * contributing server gave (`defaultTtlMs` when none did), and `private` as soon as one server
 * says so — the aggregate is never more shareable than its most private part.
 */
export function aggregateListHints(shares: Iterable<Pick<ServerShare, 'tools' | 'hints'>>, defaultTtlMs: number): ListHintsAggregate {
  let ttlMs: number | undefined;
  let cacheScope: 'public' | 'private' = 'public';
  for (const share of shares) {
    if (share.tools.length === 0) continue;
    const hints = share.hints;
    if (hints?.cacheScope === 'private') cacheScope = 'private';
    if (hints?.ttlMs !== undefined && hints.ttlMs > 0) ttlMs = Math.min(ttlMs ?? hints.ttlMs, hints.ttlMs);
  }
  return { ttlMs: ttlMs ?? defaultTtlMs, cacheScope };
}
