import type { AgentSettings } from '../../config/agent-schema.js';
import { compileAgentView, type AgentView } from './agent-view.js';

/**
 * Who sent a request, as the request path sees it (issue #22): the agent whose key the request
 * carried, with its compiled view. Absent for the operator's key and for a daemon without keys
 * (loopback trust). The auth guard resolves a key to an agent; the runner hands it on to what
 * needs to know the caller (the audit log, per-agent limits, approvals, the agent's view).
 */
export interface AgentRef {
  /** The agent's name as configured (`agents.<name>`) or created with `switchboard agents add`. */
  readonly name: string;
  /** What the agent sees and may call; absent, everything (as for the operator). */
  readonly view?: AgentView;
  /** A JWT agent's verified claims (issue #40 item 4), for rules over `agent.claims`; absent for a key's agent. */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** A JWT agent's token expiry (`exp`, epoch ms): long-lived feeds end with it. */
  readonly expiresAt?: number;
}

/**
 * One ref per agent name and settings object, so a request allocates nothing for it and the view
 * is compiled once. Settings are never changed in place (a reload or `agents add` makes new
 * ones), so keying on their identity can never serve a stale view.
 */
const refs = new WeakMap<object, AgentRef>();

/** The ref of `agent`, its view compiled on first use. */
export function agentRefOf(agent: { readonly name: string; readonly settings: Readonly<AgentSettings> }): AgentRef {
  const cached = refs.get(agent.settings);
  if (cached?.name === agent.name) return cached;
  const view = compileAgentView(agent.settings);
  const ref: AgentRef = view.everything ? { name: agent.name } : { name: agent.name, view };
  refs.set(agent.settings, ref);
  return ref;
}
