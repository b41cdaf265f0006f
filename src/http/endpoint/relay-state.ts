import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The `requestState` Switchboard hands a 2026-07-28 agent when it relays a server's
 * `input_required` (SPEC §7): the server's own state, bound to the request it belongs to (method
 * and name), dated, and signed with a key this process made up — the state travels through the
 * agent, and the revision says a server must refuse state that was tampered with. It does not
 * survive a restart; neither does the call it continues. Replicas of a cluster share the key
 * (kept in the store), so a retry carrying it may reach any of them.
 */

/** How long a relayed state stays valid. @default 600000 */
export const RELAY_STATE_TTL_MS = 10 * 60_000;

const PREFIX = 'r.';

interface Payload {
  /** The request it continues, e.g. `tools/call mcp_rich_ask`. */
  t: string;
  /** The server's own requestState, if it gave one. */
  s?: string;
  /** Answers Switchboard gave itself in that round (see input-required.ts). */
  a?: Record<string, unknown>;
  /** Minted at (ms since epoch). */
  at: number;
}

export class RelayStates {
  readonly #key: Buffer;

  /** @param key the sealing key: one every replica shares in a cluster (issue #28), else one of this process */
  constructor(
    private readonly ttlMs = RELAY_STATE_TTL_MS,
    private readonly now: () => number = Date.now,
    key: Buffer = randomBytes(32),
  ) {
    this.#key = key;
  }

  /** Whether a requestState is one of these (rather than a parked call's token). */
  static owns(state: string): boolean {
    return state.startsWith(PREFIX);
  }

  seal(target: string, serverState: string | undefined, answered?: Record<string, unknown>): string {
    const payload: Payload = { t: target, ...(serverState !== undefined ? { s: serverState } : {}), ...(answered ? { a: answered } : {}), at: this.now() };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${PREFIX}${body}.${this.#mac(body)}`;
  }

  /** The server's state sealed for `target`; undefined when forged, altered, expired or for another request. */
  open(state: string, target: string): { serverState: string | undefined; answered: Record<string, unknown> | undefined } | undefined {
    if (!RelayStates.owns(state)) return undefined;
    const [body, mac] = state.slice(PREFIX.length).split('.');
    if (body === undefined || mac === undefined) return undefined;
    const expected = Buffer.from(this.#mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
    } catch {
      return undefined;
    }
    if (payload.t !== target || this.now() - payload.at > this.ttlMs) return undefined;
    return { serverState: payload.s, answered: payload.a };
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#key).update(body).digest('base64url');
  }
}
