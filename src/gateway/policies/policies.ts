import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { PolicyRule } from '../../config/policy-schema.js';
import type { Catalogues } from '../../upstream/catalogue/catalogues.js';
import type { Clock } from '../../util/clock.js';
import type { AgentRef } from '../agents/agent-ref.js';
import type { AuditLog } from '../audit/audit-log.js';
import { PolicyImpact, type ImpactRow } from './policy-impact.js';
import { PolicySet, type PolicyInput, type PolicyVerdict, type ShadowHit } from './policy-set.js';

/** The requests policies look at (issue #40): tool calls, prompt gets and resource reads. */
export type PolicedRequest =
  | { method: 'tools/call'; name: string; arguments?: Record<string, unknown> | undefined }
  | { method: 'prompts/get'; name: string; arguments?: Record<string, string> | undefined }
  | { method: 'resources/read'; uri: string };

export interface PoliciesOptions {
  catalogues: Pick<Catalogues, 'tools' | 'prompts' | 'resources'>;
  clock: Pick<Clock, 'now'>;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Each would-be denial of a shadow rule is audited (kind `policy`). @default not audited */
  audit?: Pick<AuditLog, 'record'>;
}

/** How each enforced rule and each request has fared since start, for `/metrics`. */
export interface PolicyCounts {
  /** Requests refused by a rule (`POLICY_DENIED`), by rule. */
  denied: ReadonlyMap<string, number>;
  /** Would-be denials of shadow rules, by rule. */
  shadowed: ReadonlyMap<string, number>;
  /** `when` evaluations that failed (and so denied), by rule. */
  errors: ReadonlyMap<string, number>;
}

/**
 * Argument policies (issue #40 items 1 and 2): the rule set in force, swapped whole on reload, and
 * the would-be denials of shadow rules (`GET /policies/impact`). The policy stage asks `decide`
 * for every tool call, prompt get and resource read, script calls included.
 */
export class Policies {
  #set: PolicySet;
  readonly #impact: PolicyImpact;
  readonly #denied = new Map<string, number>();
  readonly #shadowed = new Map<string, number>();
  /** Failures of rule sets replaced since start, so the counter never goes back. */
  readonly #pastErrors = new Map<string, number>();

  constructor(
    rules: readonly PolicyRule[],
    private readonly options: PoliciesOptions,
  ) {
    this.#set = new PolicySet(rules);
    this.#impact = new PolicyImpact(options.clock);
  }

  /** The rules in force, in order. */
  get rules(): readonly PolicyRule[] {
    return this.#set.rules;
  }

  get empty(): boolean {
    return this.#set.empty;
  }

  /** A reload's rules (already validated: a bad set never gets here, so the last good one stays); the same rules change nothing. */
  replace(rules: readonly PolicyRule[]): void {
    if (JSON.stringify(rules) === JSON.stringify(this.#set.rules)) return;
    for (const [rule, n] of this.#set.failures()) this.#pastErrors.set(rule, (this.#pastErrors.get(rule) ?? 0) + n);
    this.#set = new PolicySet(rules);
    this.options.logger.info({ rules: rules.map((rule) => rule.name) }, 'policies applied');
  }

  /**
   * The verdict on `request` by `agent`; `allow` for a name outside the agent's view or unknown
   * (the router refuses it as unknown, so a policy never tells what exists).
   */
  decide(request: PolicedRequest, agent: AgentRef | undefined, transport: 'rest' | 'mcp'): PolicyVerdict {
    const input = this.#inputOf(request, agent);
    if (!input) return { effect: 'allow' };
    const verdict = this.#set.decide(input, (hit) => this.#shadow(hit, input, transport));
    if (verdict.effect === 'deny') this.#denied.set(verdict.rule, (this.#denied.get(verdict.rule) ?? 0) + 1);
    return verdict;
  }

  /** Would-be denials since `since` (ms since the epoch), by rule × agent × tool. */
  impact(since: number): { rows: ImpactRow[]; dropped: number } {
    return { rows: this.#impact.summary(since), dropped: this.#impact.dropped };
  }

  counts(): PolicyCounts {
    const errors = new Map(this.#pastErrors);
    for (const [rule, n] of this.#set.failures()) errors.set(rule, (errors.get(rule) ?? 0) + n);
    return { denied: this.#denied, shadowed: this.#shadowed, errors };
  }

  #shadow(hit: ShadowHit, input: PolicyInput, transport: 'rest' | 'mcp'): void {
    const id = randomUUID();
    const name = input.method === 'resources/read' ? (input.uri ?? '') : input.exposed;
    const agent = input.agent ?? '';
    this.#impact.record({ id, rule: hit.rule, effect: hit.effect, agent, server: input.server, name });
    this.#shadowed.set(hit.rule, (this.#shadowed.get(hit.rule) ?? 0) + 1);
    // Names only: the arguments that made the rule match are never logged.
    this.options.logger.info(
      { id, rule: hit.rule, effect: hit.effect, agent: input.agent, server: input.server, name, ...(hit.failed ? { failed: true } : {}) },
      'shadow policy would have refused the request',
    );
    this.options.audit?.record({
      ts: this.options.clock.now(),
      ...(input.agent !== undefined ? { agent: input.agent } : {}),
      transport,
      server: input.server,
      kind: 'policy',
      name,
      outcome: 'denied',
      code: 'POLICY_DENIED',
      durationMs: 0,
      argBytes: 0,
      resultBytes: 0,
    });
  }

  #inputOf(request: PolicedRequest, agent: AgentRef | undefined): PolicyInput | undefined {
    const { catalogues, clock } = this.options;
    const view = agent?.view;
    const base = { agent: agent?.name, claims: claimsOf(agent), now: clock.now() };
    if (request.method === 'resources/read') {
      const server = catalogues.resources.route(request.uri);
      if (server === undefined || (view && !view.allowsServer(server))) return undefined;
      return { ...base, server, tool: '', exposed: '', annotations: {}, args: { uri: request.uri }, method: request.method, uri: request.uri };
    }
    if (request.method === 'prompts/get') {
      const prompt = catalogues.prompts.get(request.name);
      if (!prompt || (view && !view.allowsServer(prompt.server))) return undefined;
      return { ...base, server: prompt.server, tool: prompt.originalName, exposed: prompt.name, annotations: {}, args: request.arguments ?? {}, method: request.method };
    }
    const tool = catalogues.tools.get(request.name);
    if (!tool || (view && !view.allowsTool(tool))) return undefined;
    return {
      ...base,
      server: tool.server,
      tool: tool.originalName,
      exposed: tool.name,
      annotations: (tool.annotations ?? {}) as Record<string, unknown>,
      args: request.arguments ?? {},
      method: request.method,
    };
  }
}

/** The caller's identity claims: an agent signed in by JWT carries them (issue #40 item 4); by key, none. */
function claimsOf(agent: AgentRef | undefined): Record<string, unknown> {
  return agent?.claims ?? {};
}
