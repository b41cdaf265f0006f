import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { TransportKind } from '../../config/types.js';
import { SwitchboardError } from '../../errors.js';
import {
  eraMismatchMessage,
  isEraMismatch,
  isNegotiationFailure,
  verdictOf,
  type EraVerdict,
  type ProtocolEra,
  type ProtocolMode,
} from './protocol-era.js';
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
 * A stdio server that instead stays silent on the probe, or exits on it, is started afresh and
 * spoken to in the 2025 era: one extra spawn for such servers, none for the others (the SDK's
 * own disposable-sibling probe exists only for its `StdioClientTransport`, which we do not use,
 * and would cost a second process on every first start). A verdict that proves wrong (the
 * server answers the other era's refusal) is dropped and the other era tried once. Over HTTP, a
 * 4xx on the legacy handshake still falls back to the legacy SSE transport — unless it was an
 * authorization refusal or an era refusal.
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
    if (kind === 'stdio' && talked === undefined && isProbeCasualty(err)) {
      attempt.logger?.info('the server did not survive or answer the protocol probe; starting it again in the 2025 era');
      return { ...(await openSession(kind, attempt, { mode: 'legacy', prior: LEGACY })), kind, verdict: LEGACY, fromCache: false };
    }
    if (talked !== undefined && isEraMismatch(err, talked)) {
      if (mode !== 'auto') throw new SwitchboardError('UPSTREAM_CONNECT_FAILED', `Could not connect to MCP server "${attempt.name}": ${eraMismatchMessage(talked)}`, { cause: err });
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

/** The probe, not the server, failed: it stayed silent on `server/discover`, or died of it. */
function isProbeCasualty(err: unknown): boolean {
  return (
    isNegotiationFailure(err) ||
    (err instanceof SdkError && (err.code === SdkErrorCode.RequestTimeout || err.code === SdkErrorCode.ConnectionClosed))
  );
}
