import type { TransportKind } from '../config/types.js';
import { SwitchboardError } from '../errors.js';
import { closeClient } from './connection.js';
import { eraMismatchMessage, isEraMismatch, verdictOf, type EraVerdict, type ProtocolEra, type ProtocolMode } from './protocol-era.js';
import { openSession, type Attempt, type Session } from './session.js';
import { StderrRing } from './stderr-ring.js';
import { httpStatusOf, isHttpClientError, transportKindOf } from './transports.js';

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
 * a warm start sends nothing extra); without one, `auto` probes — over HTTP the SDK asks
 * `server/discover` in place, over stdio a disposable sibling process is asked, so the real
 * child never sees a probe. A verdict that proves wrong (the server answers the other era's
 * refusal) is dropped and the other era tried once. Over HTTP, a 4xx on the legacy handshake
 * still falls back to the legacy SSE transport — unless it was an authorization refusal or an
 * era refusal.
 */
export async function negotiateSession(attempt: Attempt, mode: ProtocolMode, cached: EraVerdict | undefined): Promise<Negotiated> {
  const kind = transportKindOf(attempt.config);
  if (kind === 'sse') return { ...(await openSession('sse', attempt, { mode: 'legacy', prior: LEGACY })), kind, verdict: LEGACY, fromCache: false };

  const usable = usableVerdict(mode, cached);
  const prior = usable ?? (mode === 'auto' && kind === 'stdio' ? await probeStdioEra(attempt) : undefined);
  const talked: ProtocolEra | undefined = prior?.kind ?? (mode === 'auto' ? undefined : mode);
  try {
    const session = await openSession(kind, attempt, { mode, ...(prior ? { prior } : {}) });
    return { ...session, kind, verdict: verdictOf(session.client), fromCache: usable !== undefined };
  } catch (err) {
    if (attempt.deadline.signal.aborted) throw err;
    if (talked !== undefined && isEraMismatch(err, talked)) {
      if (mode !== 'auto') throw new SwitchboardError('UPSTREAM_CONNECT_FAILED', `Could not connect to MCP server "${attempt.name}": ${eraMismatchMessage(talked)}`, { cause: err });
      attempt.logger?.info({ talked }, 'the server refused that protocol era; trying the other one');
      const other: ProtocolMode = talked === 'legacy' ? 'modern' : 'legacy';
      const session = await openSession(kind, attempt, { mode: other });
      return { ...session, kind, verdict: verdictOf(session.client), fromCache: false };
    }
    if (kind === 'http' && isSseFallbackCue(err)) {
      attempt.logger?.info({ status: httpStatusOf(err) }, 'Streamable HTTP refused the handshake; falling back to legacy SSE');
      return { ...(await openSession('sse', attempt, { mode: 'legacy', prior: LEGACY })), kind: 'sse', verdict: LEGACY, fromCache: false };
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

/** A 4xx on the handshake that says "not this transport" — not "not you" (401/403), not "not this era". */
function isSseFallbackCue(err: unknown): boolean {
  const status = httpStatusOf(err);
  return isHttpClientError(err) && status !== 401 && status !== 403 && !isEraMismatch(err, 'legacy');
}

/**
 * Asks a disposable sibling of a stdio server whether it speaks the modern era: same command,
 * stderr discarded, killed afterwards. Any failure — an error answer, silence until the probe
 * timeout, an exit — means legacy.
 */
async function probeStdioEra(attempt: Attempt): Promise<EraVerdict> {
  const sibling: Attempt = { ...attempt, stderr: new StderrRing(), logger: undefined };
  try {
    const { client, transport } = await openSession('stdio', sibling, { mode: 'modern' });
    const verdict = verdictOf(client);
    await closeClient(client, transport);
    return verdict;
  } catch (err) {
    if (attempt.deadline.signal.aborted) throw err;
    return LEGACY;
  }
}
