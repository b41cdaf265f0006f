import { policyEnvironment } from '../../config/policy-cel.js';
import type { PolicyRule } from '../../config/policy-schema.js';
import { globMatcher } from '../../util/glob-matcher.js';

/** What a rule is evaluated over: the request as routed, before it is sent. */
export interface PolicyInput {
  /** The agent's name; undefined for the operator and without keys (matches no `match.agents`). */
  agent: string | undefined;
  /** The agent's identity claims (issue #40 item 4); `{}` for an agent signed in by key. */
  claims: Record<string, unknown>;
  server: string;
  /** The tool's or prompt's own name at its server; '' for a resource read. */
  tool: string;
  /** The exposed name the agent used; '' for a resource read. */
  exposed: string;
  annotations: Record<string, unknown>;
  args: Record<string, unknown>;
  method: 'tools/call' | 'prompts/get' | 'resources/read';
  uri?: string | undefined;
  now: number;
}

/** What the rules decided: the first enforced rule that applied, or `allow` when none did. */
export type PolicyVerdict =
  | { effect: 'allow'; rule?: string }
  | { effect: 'deny' | 'approve'; rule: string; reason: string; /** The rule's `when` failed to evaluate: denied, fail closed. */ failed?: true };

/** A shadow rule that would have denied or held the request. */
export interface ShadowHit {
  rule: string;
  effect: 'deny' | 'approve';
  /** The rule's `when` failed to evaluate: it would have denied (fail closed). */
  failed?: true;
}

type Evaluate = (context: Record<string, unknown>) => unknown;

interface CompiledRule {
  readonly rule: PolicyRule;
  readonly reason: string;
  readonly applies: (input: PolicyInput) => boolean;
  readonly evaluate: Evaluate;
}

export const DEFAULT_REASON = 'denied by policy';

/**
 * A rule set, compiled once (issue #40 item 1): each `when` parsed to a function, each `match`
 * list to a glob matcher. `decide` walks the rules in order; the first enforced rule whose match
 * and `when` hold decides. Shadow rules are evaluated on the way and reported, never obeyed.
 */
export class PolicySet {
  readonly #rules: readonly CompiledRule[];
  /** Rules whose `when` threw or yielded a non-bool, by name: each was counted as a denial. */
  readonly #failures = new Map<string, number>();

  /** Throws when a rule does not compile: the config schema checked them, so that is a bug. */
  constructor(readonly rules: readonly PolicyRule[]) {
    // No rules, no CEL: a daemon without policies never loads the library (issue #44).
    const env = rules.length > 0 ? policyEnvironment() : undefined;
    this.#rules = rules.map((rule) => ({ rule, reason: rule.reason ?? DEFAULT_REASON, applies: matcherOf(rule), evaluate: env!.parse(rule.when) as Evaluate }));
  }

  get empty(): boolean {
    return this.#rules.length === 0;
  }

  /** Evaluation failures by rule since this set was built (`switchboard_policy_evaluation_errors_total`). */
  failures(): ReadonlyMap<string, number> {
    return this.#failures;
  }

  decide(input: PolicyInput, onShadow?: (hit: ShadowHit) => void): PolicyVerdict {
    let context: Record<string, unknown> | undefined;
    for (const compiled of this.#rules) {
      if (!compiled.applies(input)) continue;
      context ??= contextOf(input);
      const { rule } = compiled;
      const outcome = this.#evaluate(compiled, context);
      if (outcome === false) continue;
      if (rule.mode === 'shadow') {
        if (outcome === 'failed') onShadow?.({ rule: rule.name, effect: 'deny', failed: true });
        else if (rule.effect !== 'allow') onShadow?.({ rule: rule.name, effect: rule.effect });
        continue;
      }
      if (outcome === 'failed') return { effect: 'deny', rule: rule.name, reason: `the rule could not be evaluated (${compiled.reason})`, failed: true };
      if (rule.effect === 'allow') return { effect: 'allow', rule: rule.name };
      return { effect: rule.effect, rule: rule.name, reason: compiled.reason };
    }
    return { effect: 'allow' };
  }

  /** true / false, or `failed` (an error, or not a bool): the rule then denies, fail closed. */
  #evaluate(compiled: CompiledRule, context: Record<string, unknown>): boolean | 'failed' {
    try {
      const value = compiled.evaluate(context);
      if (typeof value === 'boolean') return value;
    } catch {
      // The error names the argument values it met; it is counted, never logged or answered.
    }
    this.#failures.set(compiled.rule.name, (this.#failures.get(compiled.rule.name) ?? 0) + 1);
    return 'failed';
  }
}

/** The CEL variables of one request (policy-cel.ts declares them). */
function contextOf(input: PolicyInput): Record<string, unknown> {
  return {
    agent: { name: input.agent ?? '', claims: input.claims },
    tool: { server: input.server, name: input.tool, annotations: input.annotations },
    args: input.args,
    request: { method: input.method, ...(input.uri !== undefined ? { uri: input.uri } : {}) },
    now: new Date(input.now),
  };
}

/** Whether a rule's `match` selects the request: every list given must match. */
function matcherOf(rule: PolicyRule): (input: PolicyInput) => boolean {
  const { agents, servers, tools } = rule.match;
  const agent = agents && globMatcher(agents);
  const server = servers && globMatcher(servers);
  const tool = tools && globMatcher(tools);
  return (input) => {
    if (agent && (input.agent === undefined || !agent(input.agent))) return false;
    if (server && !server(input.server)) return false;
    if (tool && (input.method === 'resources/read' || !(tool(input.tool) || tool(input.exposed)))) return false;
    return true;
  };
}
