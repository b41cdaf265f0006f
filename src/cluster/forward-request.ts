import { createHmac, timingSafeEqual } from 'node:crypto';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Hands one HTTP request to the replica that owns what it names (a 2025-era `/mcp` session, a
 * parked 2026-07-28 call, a held approval) and relays the answer as it comes, streams included.
 * This is an HTTP reverse proxy of one request, not MCP: the bytes are the owner's, and the MCP
 * wire stays the SDK's at both ends. The client's own `Host`, `Origin` and key go along: the
 * owner checks the key as this replica did. `Host` and `Origin` name this replica (or the
 * balancer), not the owner, so the owner takes them as checked when the request proves it comes
 * from a replica: an HMAC with the cluster's sealing key over who forwarded what, when. A
 * rebound web page cannot forge that, and a replayed proof expires within a minute.
 */

/** Marks a forwarded request: it is never forwarded again (no loops between replicas). */
export const FORWARDED_FROM_HEADER = 'x-switchboard-forwarded-from';
/** `<ms since epoch>.<HMAC>`: that a replica of this cluster forwarded the request. */
export const FORWARD_PROOF_HEADER = 'x-switchboard-forward-proof';
/** How old a proof may be: the clocks of replicas differ a little, a replay is refused. */
const PROOF_TTL_MS = 60_000;

function proofMac(key: Buffer, from: string, method: string, url: string, at: string): Buffer {
  return createHmac('sha256', key).update(`${from}\n${method}\n${url}\n${at}`).digest();
}

/** Whether `request` was forwarded by a replica holding `key`: then its Host and Origin were checked there. */
export function isProvenForward(request: { method: string; url: string; headers: IncomingHttpHeaders }, key: Buffer, now = Date.now()): boolean {
  const from = request.headers[FORWARDED_FROM_HEADER];
  const proof = request.headers[FORWARD_PROOF_HEADER];
  if (typeof from !== 'string' || typeof proof !== 'string') return false;
  const dot = proof.indexOf('.');
  const at = proof.slice(0, dot);
  if (dot < 1 || Math.abs(now - Number(at)) > PROOF_TTL_MS) return false;
  const given = Buffer.from(proof.slice(dot + 1), 'base64url');
  const expected = proofMac(key, from, request.method, request.url, at);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Headers of one hop only (RFC 9110 §7.6.1), and the length, which is set anew. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'content-length']);

/** How long the owner may take to accept the connection before it counts as gone. */
const CONNECT_TIMEOUT_MS = 2_000;

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function endToEnd(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

/** The headers that mark a request as sent by replica `self` of the cluster holding `key` (never forwarded again). */
export function forwardProof(self: string, key: Buffer, method: string, url: string): Record<string, string> {
  const at = String(Date.now());
  return { [FORWARDED_FROM_HEADER]: self, [FORWARD_PROOF_HEADER]: `${at}.${proofMac(key, self, method, url, at).toString('base64url')}` };
}

/** Whether this request came from another replica already. */
export function wasForwarded(request: FastifyRequest): boolean {
  return request.headers[FORWARDED_FROM_HEADER] !== undefined;
}

export interface ForwardOptions {
  /**
   * What ends a relayed SSE stream that the owner broke off (it died mid-stream): the last events
   * the client gets, or undefined to reset its connection as the owner's was.
   */
  lostStream?: () => string | undefined;
  /**
   * Aborts when the owner stopped running (owner-watch.ts): the request is cut off then, as if the
   * owner had died, instead of waiting for an answer that will not come.
   */
  ownerGone?: AbortSignal;
}

/**
 * Forwards `request` to `ownerUrl` and relays the answer. Resolves `true` once the owner's answer
 * is being relayed (the reply is then hijacked and ends with the owner's), `false` when the owner
 * could not be reached — nothing was sent, and the caller answers for itself.
 */
export function forwardRequest(request: FastifyRequest, reply: FastifyReply, ownerUrl: string, self: string, key: Buffer, options: ForwardOptions = {}): Promise<boolean> {
  return new Promise((resolve) => {
    const body = request.body === undefined || request.method === 'GET' ? undefined : Buffer.from(JSON.stringify(request.body));
    const headers = { ...endToEnd(request.headers), ...forwardProof(self, key, request.method, request.url) };
    if (body) headers['content-length'] = String(body.length);
    const target = new URL(request.url, ownerUrl);
    const outgoing = httpRequest(target, { method: request.method, headers, agent });
    let answered = false;
    /** Ends an answer being relayed as its owner's death would; set while the owner's answer streams. */
    let lost: (() => void) | undefined;
    const connectTimer = setTimeout(() => outgoing.destroy(new Error('owner did not accept the connection in time')), CONNECT_TIMEOUT_MS);
    outgoing.once('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer);
      else socket.once('connect', () => clearTimeout(connectTimer));
    });
    outgoing.once('response', (response) => {
      clearTimeout(connectTimer);
      answered = true;
      reply.hijack();
      reply.raw.writeHead(response.statusCode ?? 502, endToEnd(response.headers));
      // A stream (SSE) is relayed as it comes: flushed chunk by chunk by pipe.
      response.pipe(reply.raw);
      // The owner died mid-answer, or was cut off (below): a stream ends with the last events the
      // caller gives (the call's outcome unknown), else the client's connection is reset as the owner's was.
      lost = () => {
        lost = undefined;
        const last = String(response.headers['content-type']).startsWith('text/event-stream') ? options.lostStream?.() : undefined;
        response.unpipe(reply.raw);
        if (last === undefined || reply.raw.writableEnded) reply.raw.destroy();
        else reply.raw.end(last);
      };
      response.once('end', () => (lost = undefined));
      response.once('error', () => lost?.());
      resolve(true);
    });
    outgoing.once('error', () => {
      clearTimeout(connectTimer);
      if (!answered) resolve(false);
      else if (lost) lost();
      else if (!reply.raw.writableEnded) reply.raw.destroy();
    });
    // The client went away: so does the forwarded request (the owner cancels what it ran).
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) outgoing.destroy();
    });
    // The owner stopped (frozen, partitioned): cut off as if it had died, not waited for.
    const { ownerGone } = options;
    if (ownerGone) {
      const cut = (): void => void outgoing.destroy(ownerGone.reason instanceof Error ? ownerGone.reason : new Error('the owner stopped'));
      if (ownerGone.aborted) cut();
      else {
        ownerGone.addEventListener('abort', cut, { once: true });
        outgoing.once('close', () => ownerGone.removeEventListener('abort', cut));
      }
    }
    outgoing.end(body);
  });
}
