import type { TransportKind } from '../../config/types.js';
import { SwitchboardError } from '../../errors.js';
import { eraMismatchMessage, isEraMismatch, isNegotiationFailure, verdictOf, type EraVerdict, type ProtocolEra, type ProtocolMode } from './protocol-era.js';
import { FallbackFailedError } from './first-failure.js';
import { openSession, type Attempt, type Session } from './session.js';
import { httpStatusOf, transportKindOf } from './transports.js';

const LEGACY: EraVerdict = { kind: 'legacy' };

export interface Negotiated extends Session {
  /** The transport actually used (an `http` server may have fallen back to `sse`). */
  kind: TransportKind;
  verdict: EraVerdict;
  /** True when the session was opened on the cached verdict, unchecked so far. */
  fromCache: boolean;
}

/**
 * Opens a session in the right protocol era (SPEC §4). A cached verdict is used as is (no probe:
 * a warm start sends nothing extra); without one, `auto` lets the SDK ask `server/discover` and
 * fall back to `initialize` on the same connection when refused — what most 2025-era servers do.
 * A stdio server's era is learnt on its one process (issue #36 item 3): the probe waits for it
 * most of the connect timeout (a first `npx -y` start takes many seconds), and a probe left
 * unanswered leads to `initialize` on that same process — the SDK's own fallback for a stdio
 * transport — queued behind the probe, so a server that was merely slow answers both. A server
 * that exits meanwhile is reported once, with its exit and stderr: it is never started a second
 * time to learn an era. (The SDK's disposable-sibling probe, for its `StdioClientTransport` only,
 * would cost a second process on every first start.) The one exception is a server that refuses
 * that late `initialize` as the wrong era: it said it speaks only 2026-07-28, so it is started once
 * more in that era. A verdict that proves wrong (the server answers the other era's refusal) is
 * dropped and the other era tried once. Over HTTP, a 4xx on the legacy handshake still falls back
 * to the legacy SSE transport — unless it was an authorization refusal or an era refusal.
 */
export async function negotiateSession(attempt: Attempt, mode: ProtocolMode, cached: EraVerdict | undefined): Promise<Negotiated> {
  const kind = transportKindOf(attempt.config);
  if (kind === 'sse') return { ...(await openSession('sse', attempt, { mode: 'legacy', prior: LEGACY })), kind, verdict: LEGACY, fromCache: false };

  const prior = usableVerdict(mode, cached);
  const talked: ProtocolEra | undefined = prior?.kind ?? (mode === 'auto' ? undefined : mode);
  try {
    const session = await openSession(kind, attempt, { mode, ...(prior ? { prior } : {}) });
    return { ...session, kind, verdict: verdictOf(session.client), fromCache: prior !== undefined && mode !== 'legacy' };
  } catch (err) {
    if (attempt.deadline.signal.aborted) throw err;
    if (kind === 'stdio' && attempt.exit && talked === undefined && isNegotiationFailure(err)) throw exitedOnProbe(attempt, err);
    if (kind === 'stdio' && talked === undefined && isEraMismatch(err, 'legacy')) {
      attempt.logger?.info('the server answered the protocol probe too late and refused the 2025 era; starting it again in 2026-07-28');
      const session = await openSession(kind, attempt, { mode: 'modern' });
      return { ...session, kind, verdict: verdictOf(session.client), fromCache: false };
    }
    if (talked !== undefined && isEraMismatch(err, talked)) {
      if (mode !== 'auto')
        throw new SwitchboardError('UPSTREAM_CONNECT_FAILED', `Could not connect to MCP server "${attempt.name}": ${eraMismatchMessage(talked)}`, { cause: err });
      attempt.logger?.info({ talked }, 'the server refused that protocol era; trying the other one');
      const other: ProtocolMode = talked === 'legacy' ? 'modern' : 'legacy';
      const session = await openSession(kind, attempt, { mode: other });
      return { ...session, kind, verdict: verdictOf(session.client), fromCache: false };
    }
    if (kind === 'http' && isSseFallbackCue(err)) {
      attempt.logger?.info({ status: httpStatusOf(err) }, 'Streamable HTTP refused the handshake; falling back to legacy SSE');
      const first = attempt.firstHttpFailure;
      try {
        return { ...(await openSession('sse', attempt, { mode: 'legacy', prior: LEGACY })), kind: 'sse', verdict: LEGACY, fromCache: false };
      } catch (sseError) {
        // The SSE error says nothing of why Streamable HTTP failed; the first answer does.
        if (attempt.deadline.signal.aborted) throw sseError;
        throw new FallbackFailedError(first, err, sseError);
      }
    }
    throw err;
  }
}

/** A cached verdict this mode may use: any in `auto`, only its own era when the era is forced. */
function usableVerdict(mode: ProtocolMode, cached: EraVerdict | undefined): EraVerdict | undefined {
  if (mode === 'legacy') return LEGACY;
  if (mode === 'modern') return cached?.kind === 'modern' ? cached : undefined;
  return cached;
}

/**
 * The statuses with which a server that only speaks the 2024-11-05 HTTP+SSE transport refuses
 * the initialize POST, as the transport's backwards-compatibility rules name them (400, 404,
 * 405). Any other answer (410 Gone, 401/403, a 5xx) is the server's real answer and stays the
 * error.
 */
const SSE_FALLBACK_STATUSES = new Set([400, 404, 405]);

/** An answer to the handshake that says "not this transport" — not "not you", not "not this era". */
function isSseFallbackCue(err: unknown): boolean {
  const status = httpStatusOf(err);
  return status !== undefined && SSE_FALLBACK_STATUSES.has(status) && !isEraMismatch(err, 'legacy');
}

/**
 * A stdio server that exited before it answered the era probe, told once (the caller appends its
 * stderr): the SDK's own words would be about the probe, not the server. A server that exits on
 * any request it does not know before `initialize` is the one case `"protocol": "legacy"` helps.
 */
function exitedOnProbe(attempt: Attempt, cause: unknown): SwitchboardError {
  const exit = attempt.exit;
  const how = exit?.signal ? `was killed by ${exit.signal}` : `exited with code ${exit?.code ?? 'unknown'}`;
  // On a line of its own: the first line is what a status line shows, and usually the stderr below says why.
  const hint = 'a server that exits on a request it does not know before initialize needs "protocol": "legacy"';
  return new SwitchboardError('UPSTREAM_CONNECT_FAILED', `Could not connect to MCP server "${attempt.name}": the process ${how} before it answered\n(${hint})`, { cause });
}
