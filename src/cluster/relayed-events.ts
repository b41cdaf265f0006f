import { z } from 'zod';
import { AGENT_CHANGES, type DaemonEvent, type DaemonEventType } from '../events/daemon-events.js';

/**
 * Which bus events travel between the replicas of a cluster (issue #28), and which of them the
 * others apply. The owners announce their changes on the bus — the runtime its reloads, the agent
 * registry its agents, the pins an approval, the OAuth broker a sign-in or sign-out — and the cluster relays
 * them; no route string is read anywhere, so renaming a route cannot stop a replica applying it.
 */

/**
 * The events every replica shows, whichever replica they happened on: the operator's events.
 * A replica's own server events (status, tools, logs) stay its own: each connects its own upstreams.
 */
export const RELAYED_EVENT_TYPES: ReadonlySet<DaemonEventType> = new Set<DaemonEventType>([
  'reload.started',
  'reload.finished',
  'config.changed',
  'approval.requested',
  'approval.resolved',
  'agent.changed',
  'pins.changed',
  'oauth.signed_in',
  'oauth.signed_out',
]);

/**
 * The relayed events another replica applies, as read off the channel (an input like any other:
 * parsed, never trusted by shape). One that `follows` another replica's is shown, not applied again.
 */
export const AppliedEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('reload.started'), server: z.string().nullable(), force: z.literal(true).optional(), follows: z.string().optional() }),
  z.object({ type: z.literal('agent.changed'), agent: z.string(), change: z.enum(AGENT_CHANGES) }),
  z.object({ type: z.literal('pins.changed'), server: z.string(), tools: z.array(z.object({ name: z.string(), hash: z.string() })), follows: z.string().optional() }),
  z.object({ type: z.literal('oauth.signed_in'), server: z.string() }),
  z.object({ type: z.literal('oauth.signed_out'), server: z.string() }),
]);
export type AppliedEvent = z.infer<typeof AppliedEventSchema>;

const APPLIED: ReadonlySet<string> = new Set(AppliedEventSchema.options.map((option) => option.shape.type.value));

/** Whether `type` is one the other replicas apply (not only show). */
export function isApplied(type: DaemonEventType): boolean {
  return APPLIED.has(type);
}

/** What this replica does when another one acted. */
export interface ClusterEffects {
  /** Re-reads agents and keys from the store (another replica changed one). */
  refreshAgents(): Promise<void>;
  /** Serves (and pins) the held tools another replica approved, where this replica holds the same definitions. */
  approveTools(server: string, tools: ReadonlyArray<{ name: string; hash: string }>, follows: string): void;
  reload(server: string | null, force: boolean, follows: string): Promise<unknown>;
  /** A sign-in done on another replica is in the store: a server waiting for one connects with it. */
  resumeAfterSignIn(server: string): void;
  /**
   * Another replica signed out of `server` (its tokens are gone from the store): this one drops
   * what it holds of the sign-in in memory (the reload relayed after it reconnects the server).
   */
  signedOut(server: string): void;
}

/** Applies another replica's `event` here; rejects when it cannot. */
export async function applyEvent(effects: ClusterEffects, event: AppliedEvent, from: string): Promise<void> {
  switch (event.type) {
    case 'reload.started':
      await effects.reload(event.server, event.force === true, from);
      return;
    case 'agent.changed':
      return effects.refreshAgents();
    case 'pins.changed':
      return effects.approveTools(event.server, event.tools, from);
    case 'oauth.signed_in':
      return effects.resumeAfterSignIn(event.server);
    case 'oauth.signed_out':
      return effects.signedOut(event.server);
  }
}

/** The event as it goes on the channel: without the sending bus's stamps. */
export function plainEvent(event: DaemonEvent & { seq?: number; ts?: string; replica?: string }): DaemonEvent {
  const { seq: _seq, ts: _ts, replica: _replica, ...plain } = event;
  return plain as DaemonEvent;
}
