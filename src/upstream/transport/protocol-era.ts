import type { Client, PriorDiscovery, SdkHttpError, VersionNegotiationOptions } from '@modelcontextprotocol/client';
import { isSwitchboardError } from '../../errors.js';
import { loadedSdk, sdk } from '../sdk.js';

/**
 * Protocol eras of upstream servers (SPEC §4): the 2025 era (`initialize`, sessions; revisions
 * 2025-03-26 … 2025-11-25) and the modern era (2026-07-28: stateless, `server/discover`). The SDK
 * negotiates; this module decides what it is asked to do and keeps the verdict's shape.
 */

export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Per server (and daemon-wide default): probe, or talk one era only. */
export type ProtocolMode = 'auto' | 'legacy' | 'modern';
export const PROTOCOL_MODES: readonly ProtocolMode[] = ['auto', 'legacy', 'modern'];

/** The era verdict the SDK accepts as `prior`: a modern `server/discover` result, or "legacy". */
export type EraVerdict = PriorDiscovery;

export type ProtocolEra = 'legacy' | 'modern';

/** The SDK's negotiation setting for `mode`, the probe bounded by `probeTimeoutMs`. */
export function versionNegotiation(mode: ProtocolMode, probeTimeoutMs: number): VersionNegotiationOptions {
  if (mode === 'legacy') return { mode: 'legacy' };
  return { mode: mode === 'modern' ? { pin: MODERN_PROTOCOL_VERSION } : 'auto', probe: { timeoutMs: probeTimeoutMs } };
}

/** The verdict a connected client reached: modern with its discover result, else legacy. */
export function verdictOf(client: Client): EraVerdict {
  const discover = client.getDiscoverResult();
  return discover ? { kind: 'modern', discover } : { kind: 'legacy' };
}

/** Whether two verdicts differ enough to store again (a modern one is re-stored when discover changed). */
export function sameVerdict(a: EraVerdict | undefined, b: EraVerdict): boolean {
  if (!a || a.kind !== b.kind) return false;
  return a.kind === 'legacy' || JSON.stringify(a.discover) === JSON.stringify((b as Extract<EraVerdict, { kind: 'modern' }>).discover);
}

/** The JSON-RPC error code inside an HTTP error body (a 400 carrying -32022, say). */
function rpcCodeInBody(err: SdkHttpError): number | undefined {
  const text = (err.data as { text?: unknown } | undefined)?.text;
  if (typeof text !== 'string') return undefined;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown } };
    return typeof body.error?.code === 'number' ? body.error.code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `err` says the server does not speak the era we talked: an unsupported-version answer
 * (-32022, in-band or in an HTTP 400 body), or — after a modern verdict — a server that wants an
 * `initialize` first. Decided by codes and statuses only.
 */
export function isEraMismatch(err: unknown, talked: ProtocolEra): boolean {
  // The connection reports an answer the SDK refused as not MCP under our code; the SDK's own
  // error is its cause.
  if (isSwitchboardError(err, 'UPSTREAM_PROTOCOL_ERROR')) return isEraMismatch(err.cause, talked);
  const loaded = loadedSdk();
  if (!loaded) return false;
  const { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, SdkHttpError } = loaded;
  if (err instanceof ProtocolError && err.code === ProtocolErrorCode.UnsupportedProtocolVersion) return true;
  if (err instanceof SdkHttpError) {
    if (rpcCodeInBody(err) === ProtocolErrorCode.UnsupportedProtocolVersion) return true;
    // A 2025-only HTTP server answers an enveloped request without a session with a 400.
    return talked === 'modern' && err.status === 400;
  }
  if (talked === 'modern' && err instanceof ProtocolError) {
    // A 2025-only stdio server refuses requests before `initialize` as invalid, or knows no such method.
    return err.code === ProtocolErrorCode.InvalidRequest || err.code === ProtocolErrorCode.MethodNotFound;
  }
  // A lenient 2025-only server answers anyway, without the `resultType` every 2026-07-28 result has.
  if (talked === 'modern' && err instanceof SdkError) return err.code === SdkErrorCode.InvalidResult;
  return false;
}

/** Whether `err` is the SDK saying the era could not be agreed on (no mutual version, probe failed). */
export function isNegotiationFailure(err: unknown): boolean {
  const loaded = loadedSdk();
  return loaded !== undefined && err instanceof loaded.SdkError && err.code === 'ERA_NEGOTIATION_FAILED';
}

/**
 * Human text for a server that only speaks the other era, instead of the transport error the
 * mismatch produced (a bare 400, or an SSE fallback's 405).
 */
export function eraMismatchMessage(talked: ProtocolEra): string {
  return talked === 'legacy'
    ? `it does not speak the 2025 protocol era (it answered ${sdk().ProtocolErrorCode.UnsupportedProtocolVersion}, unsupported protocol version); it may speak ${MODERN_PROTOCOL_VERSION}: set "protocol": "auto" or "modern"`
    : `it does not speak protocol ${MODERN_PROTOCOL_VERSION}; set "protocol": "auto" or "legacy"`;
}
