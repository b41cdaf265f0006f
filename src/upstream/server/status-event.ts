import type { Logger } from 'pino';
import type { DaemonEvent } from '../../events/daemon-events.js';
import type { StatusChange } from './upstream-host.js';

/**
 * Logs a status transition once, at the level it deserves, and gives its `server.status` event
 * (SPEC §9): the error with the states that have one, the attempt and its time while reconnecting.
 */
export function statusEvent(change: StatusChange, toolCount: number, log: Logger): Extract<DaemonEvent, { type: 'server.status' }> {
  const { server, status: next, previous, error } = change;
  const serverLog = log.child({ server });
  if (next === 'failed') serverLog.warn({ from: previous, code: error?.code, err: error?.message }, 'server failed');
  else if (next === 'needs_auth') serverLog.warn({ from: previous, code: error?.code }, 'server needs a person to sign in (switchboard login)');
  else if (next === 'reconnecting') serverLog.warn({ from: previous, attempt: change.attempt, code: error?.code, err: error?.message }, 'server lost; reconnecting');
  else if (next === 'connected' && previous === 'reconnecting') serverLog.info({ restarts: change.restarts }, 'server reconnected');
  else serverLog.debug({ from: previous, to: next }, 'status');
  const withError = next === 'failed' || next === 'reconnecting' || next === 'needs_auth' || (next === 'disconnected' && error !== undefined);
  return {
    type: 'server.status',
    server,
    status: next,
    previous,
    ...(withError && error ? { error } : {}),
    ...(next === 'reconnecting' ? { attempt: change.attempt } : {}),
    ...(next === 'reconnecting' && change.nextRetryAt !== undefined ? { nextRetryAt: new Date(change.nextRetryAt).toISOString() } : {}),
    toolCount,
  };
}
