import { globMatcher } from '../../util/glob-matcher.js';
import type { AgentRef } from '../agents/agent-ref.js';

/** The default `maxResultTokens` (SPEC §19): what Claude Code itself keeps of an MCP result. */
export const DEFAULT_MAX_RESULT_TOKENS = 25_000;

export interface ResultCapSettings {
  /** The daemon's cap. @default 25000; 0 = off */
  maxResultTokens?: number | undefined;
  /** Caps of tools by glob over exposed names (first match wins). @default {} */
  tools?: Readonly<Record<string, number>> | undefined;
}

/** What the caps read per request, so changed settings apply at once. */
export interface CapLookups {
  /** The server owning an exposed tool name. */
  serverOf(tool: string): string | undefined;
  /** A server's own `maxResultTokens`. */
  serverCap(server: string): number | undefined;
  /** An agent's own `maxResultTokens`. */
  agentCap(agent: string): number | undefined;
}

/**
 * Which `maxResultTokens` applies to a result (SPEC §19): the most specific that is set — the
 * calling agent's (it knows its context window), then the first tool glob matching the exposed
 * name, then the owning server's, then the daemon's. 0 turns the guard off for that result.
 */
export class ResultCaps {
  readonly #global: number;
  readonly #tools: Array<[(name: string) => boolean, number]>;

  constructor(
    settings: ResultCapSettings,
    private readonly lookups: CapLookups,
  ) {
    this.#global = settings.maxResultTokens ?? DEFAULT_MAX_RESULT_TOKENS;
    this.#tools = Object.entries(settings.tools ?? {}).map(([glob, cap]) => [globMatcher([glob]), cap]);
  }

  /** The cap of a result of `tool` (an exposed name; undefined: not a tool call) for `agent`. */
  capOf(tool: string | undefined, agent: AgentRef | undefined): number {
    const own = agent ? this.lookups.agentCap(agent.name) : undefined;
    if (own !== undefined) return own;
    if (tool === undefined) return this.#global;
    for (const [matches, cap] of this.#tools) if (matches(tool)) return cap;
    const server = this.lookups.serverOf(tool);
    return (server === undefined ? undefined : this.lookups.serverCap(server)) ?? this.#global;
  }
}
