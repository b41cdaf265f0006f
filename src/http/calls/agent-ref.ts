/**
 * Who sent a request, as the request path sees it (issue #22): the agent whose key the request
 * carried. Absent for the operator's key and for a daemon without keys (loopback trust). The
 * auth guard resolves a key to an agent; the runner hands it on to what needs to know the caller
 * (the audit log, per-agent limits, approvals, the agent's view).
 */
export interface AgentRef {
  /** The agent's name as configured (`agents.<name>`) or created with `switchboard agents add`. */
  readonly name: string;
}
