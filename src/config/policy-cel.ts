import type { Environment } from '@marcbachmann/cel-js';
import { isPlainObject } from './expand-vars.js';

/**
 * The variables a policy's `when` sees (issue #40 item 1), declared so an expression is type-checked
 * at load: a misspelt variable (`arg.sql`) or a type clash (`1 + "a"`) is a config issue, not a
 * surprise on the first call. `args`, `agent`, `tool` and `request` are maps (their fields are
 * dynamic: they are whatever the agent sent); `now` is a timestamp.
 */
const VARIABLES = [
  ['agent', 'map', 'The calling agent: {name, claims} (claims empty for an agent signed in by key)'],
  ['tool', 'map', 'What the request names: {server, name, annotations}'],
  ['args', 'map', "The request's arguments (a resource read: {uri})"],
  ['request', 'map', 'The request: {method, uri?}'],
  ['now', 'google.protobuf.Timestamp', 'When the request is evaluated'],
] as const;

let library: typeof import('@marcbachmann/cel-js') | undefined;
let loading: Promise<void> | undefined;
let shared: Environment | undefined;

/**
 * Loads the CEL library (issue #44): ~150 KB that a start whose config has no `policies` never
 * compiles. Every config load awaits `preparePolicyLanguage` before its (synchronous) parse, so a
 * rule that does not compile is still a config issue at load; the library's entry (`index.ts`)
 * awaits this once, so `DaemonConfigSchema.parse` keeps working synchronously for embedders.
 */
export function loadPolicyLanguage(): Promise<void> {
  loading ??= import('@marcbachmann/cel-js').then((cel) => {
    library = cel;
  });
  return loading;
}

/** Loads CEL when `doc` (a config document, not validated yet) has rules to check; else nothing. */
export async function preparePolicyLanguage(doc: unknown): Promise<void> {
  if (isPlainObject(doc) && Array.isArray(doc.policies) && doc.policies.length > 0) await loadPolicyLanguage();
}

/** The one environment every policy expression is checked and compiled in (declared variables only). */
export function policyEnvironment(): Environment {
  if (!shared) {
    // A parse that skipped `preparePolicyLanguage` is a bug, not a config issue.
    if (!library) throw new Error('the policy language is not loaded: await preparePolicyLanguage(config) before parsing policies');
    const env = new library.Environment({ unlistedVariablesAreDyn: false });
    for (const [name, type, description] of VARIABLES) env.registerVariable(name, type, { description });
    shared = env;
  }
  return shared;
}

/** Why a `when` expression cannot be used, with where in it (a 1-based column); undefined when it can. */
export interface CelProblem {
  message: string;
  /** 1-based line and column of the offending token, when the library locates it. */
  line?: number;
  column?: number;
}

/** Parses and type-checks `expression`; it must yield a bool (or a dynamic value, checked per call). */
export function celProblem(expression: string): CelProblem | undefined {
  let checked: ReturnType<Environment['check']>;
  try {
    checked = policyEnvironment().check(expression);
  } catch (err) {
    return problemOf(err, expression);
  }
  if (!checked.valid) return problemOf(checked.error, expression);
  if (checked.type !== 'bool' && checked.type !== 'dyn') return { message: `must yield a bool, yields ${checked.type}` };
  return undefined;
}

/** The library's error as a message and a line:column (its `range.start` is an offset into the expression). */
function problemOf(err: unknown, expression: string): CelProblem {
  const error = err as { summary?: unknown; message?: unknown; range?: { start?: unknown } } | undefined;
  const message = typeof error?.summary === 'string' ? error.summary : typeof error?.message === 'string' ? error.message : String(err);
  const start = error?.range?.start;
  if (typeof start !== 'number') return { message };
  const before = expression.slice(0, start).split('\n');
  return { message, line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}
