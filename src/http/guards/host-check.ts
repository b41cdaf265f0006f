import { isIP, type Socket } from 'node:net';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Logger } from 'pino';
import type { ErrorCode } from '../../errors.js';
import { isLoopbackHost } from '../../util/loopback.js';
import { httpError, sendError } from '../errors/http-error.js';
import { sendJsonRpcRefusal } from '../errors/jsonrpc-error.js';

/**
 * DNS-rebinding protection (SPEC §9, MCP Streamable HTTP "Security Warning"): a web page whose
 * domain was rebound to 127.0.0.1 can reach the daemon, but its requests still name the page's
 * domain in `Host` (and `Origin`). Every request — REST, the WebSocket upgrade, `/mcp`, unknown
 * paths — must therefore name the daemon itself before anything else looks at it, the token
 * check included: a stolen token must not make a rebound page acceptable either.
 */
export interface HostCheckOptions {
  /**
   * Extra names the daemon answers to, as `host` (any port) or `host:port`; for a daemon behind
   * a reverse proxy, on a LAN name, or published on another port by Docker.
   * @default []
   */
  allowedHosts?: readonly string[];
  /** Extra browser origins allowed to call the daemon, e.g. `https://dashboard.example.com`. @default [] */
  allowedOrigins?: readonly string[];
  logger?: Pick<Logger, 'warn'>;
  /** Distinct refused values logged before logging stops, so a flood cannot fill the log. @default 100 */
  maxLoggedValues?: number;
  /** A request whose Host and Origin another replica already checked (issue #28: it proves so). @default none */
  trusted?: (request: FastifyRequest) => boolean;
}

type OnRequestHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/** Where a refusal is a JSON-RPC error body: MCP clients expect one. */
export const MCP_PATH = '/mcp';

interface HostPort {
  /** Lower-case, brackets kept for IPv6 (`[::1]`), no trailing dot. */
  host: string;
  /** Undefined when the header named none. */
  port: number | undefined;
}

export function createHostCheckHook(options: HostCheckOptions = {}): OnRequestHook {
  const allowedHosts = (options.allowedHosts ?? []).map((entry) => parseHostPort(entry)).filter((e) => e !== undefined);
  const allowedOrigins = new Set((options.allowedOrigins ?? []).map(normaliseOrigin).filter((o) => o !== undefined));
  const logged = new Set<string>();
  const maxLogged = options.maxLoggedValues ?? 100;

  const logOnce = (header: 'host' | 'origin', value: string): void => {
    const key = `${header}\u0000${value}`;
    if (logged.has(key) || logged.size >= maxLogged) return;
    logged.add(key);
    options.logger?.warn({ header, value }, `refused a request whose ${header === 'host' ? 'Host' : 'Origin'} header does not name this daemon`);
  };

  /** Whether `candidate` names this daemon as reached through `socket`'s local end. */
  const namesDaemon = (candidate: HostPort, local: LocalEnd): boolean => {
    for (const entry of allowedHosts) {
      if (entry.host === candidate.host && (entry.port === undefined || entry.port === candidate.port)) return true;
    }
    if (candidate.port !== undefined && candidate.port !== local.port) return false;
    // Loopback names are safe whatever the bind: a rebound page can only ever send its own name.
    if (isLoopbackHost(candidate.host)) return true;
    // The address the connection arrived at, literally (a LAN client of a 0.0.0.0 bind).
    return local.address !== undefined && candidate.host === formatAddress(local.address);
  };

  /** The verdict on one (local end, Host, Origin): `undefined` when the request may pass. */
  const judge = (local: LocalEnd, hostHeader: string, origin: string | undefined): Refusal | undefined => {
    const host = parseHostPort(hostHeader);
    if (!host || !namesDaemon(host, local)) {
      logOnce('host', hostHeader);
      return { code: 'FORBIDDEN_HOST', message: `Host "${printable(hostHeader)}" does not name this Switchboard` };
    }
    if (origin === undefined) return undefined;
    const normalised = normaliseOrigin(origin);
    if (normalised !== undefined && allowedOrigins.has(normalised)) return undefined;
    const originHost = normalised === undefined ? undefined : parseHostPort(new URL(normalised).host);
    if (originHost && namesDaemon(withDefaultPort(originHost, normalised as string), local)) return undefined;
    logOnce('origin', origin);
    return { code: 'FORBIDDEN_ORIGIN', message: `Origin "${printable(origin)}" is not allowed to call this Switchboard` };
  };

  // Every request of every client carries the same few header values, so the verdict is kept per
  // distinct (local end, Host, Origin): parsing them on each call was a measurable share of a tool
  // call's CPU (issue #17). Bounded, so a flood of made-up values cannot grow it. A keep-alive
  // socket's requests repeat their own values, so its last verdict stays with the socket (issue
  // #44): a request that names the same Host and Origin as the one before it on its connection is
  // judged with two string comparisons, no key built; any other goes through the memo.
  const verdicts = new Map<string, Refusal | undefined>();
  const bySocket = new WeakMap<Socket, SocketVerdict>();
  return function checkHost(request, reply, done) {
    const socket = request.raw.socket;
    const hostHeader = request.headers.host ?? '';
    const origin = request.headers.origin;
    let last = bySocket.get(socket);
    if (last === undefined || last.host !== hostHeader || last.origin !== origin) {
      const key = `${socket.localAddress}\u0000${socket.localPort}\u0000${hostHeader}\u0000${origin ?? '\u0001'}`;
      let refusal: Refusal | undefined;
      if (verdicts.has(key)) refusal = verdicts.get(key);
      else {
        refusal = judge({ address: socket.localAddress, port: socket.localPort }, hostHeader, origin);
        if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
        verdicts.set(key, refusal);
      }
      last = { host: hostHeader, origin, refusal };
      bySocket.set(socket, last);
    }
    if (last.refusal === undefined || options.trusted?.(request)) return done();
    return void refuse(request, reply, last.refusal.code, last.refusal.message);
  };
}

/** The Host and Origin of a connection's latest request, and their verdict. */
interface SocketVerdict {
  host: string;
  origin: string | undefined;
  refusal: Refusal | undefined;
}

/** Distinct (local end, Host, Origin) verdicts kept before the memo starts over. */
const MAX_VERDICTS = 256;

interface LocalEnd {
  address: string | undefined;
  port: number | undefined;
}

interface Refusal {
  code: 'FORBIDDEN_HOST' | 'FORBIDDEN_ORIGIN';
  message: string;
}

function refuse(request: FastifyRequest, reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  const path = request.url.split('?', 1)[0];
  if (path === MCP_PATH) return sendJsonRpcRefusal(reply, { code, message });
  return sendError(reply, httpError(code, message));
}

/** `host`, `host:port`, `[v6]`, `[v6]:port` → parts; undefined when malformed. */
export function parseHostPort(value: string): HostPort | undefined {
  const text = value.trim().toLowerCase();
  if (text === '' || /[\s/?#@\\]/.test(text)) return undefined;
  let host: string;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end === -1) return undefined;
    host = text.slice(0, end + 1);
    const rest = text.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) return undefined;
    portText = rest === '' ? undefined : rest.slice(1);
    if (isIP(host.slice(1, -1)) !== 6) return undefined;
  } else {
    const colon = text.lastIndexOf(':');
    if (colon !== text.indexOf(':')) return undefined; // a bare IPv6 address is not a Host header
    host = colon === -1 ? text : text.slice(0, colon);
    portText = colon === -1 ? undefined : text.slice(colon + 1);
  }
  host = host.replace(/\.$/, '');
  if (host === '' || host === '[]') return undefined;
  if (portText === undefined) return { host, port: undefined };
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65_535) return undefined;
  return { host, port: Number(portText) };
}

/** `http(s)://host[:port]` in lower case without a path; undefined for `null` and other schemes. */
function normaliseOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin.trim());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return `${url.protocol}//${url.host}`.toLowerCase();
  } catch {
    return undefined;
  }
}

/** `URL.host` omits the scheme's default port; the comparison wants it spelled out. */
function withDefaultPort(hostPort: HostPort, origin: string): HostPort {
  if (hostPort.port !== undefined) return hostPort;
  return { host: hostPort.host, port: origin.startsWith('https:') ? 443 : 80 };
}

/** A socket's local address as it appears in a Host header (`[::1]`, IPv4-mapped unwrapped). */
function formatAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  return isIP(address) === 6 ? `[${address.toLowerCase()}]` : address.toLowerCase();
}

/** Header values are attacker-chosen: keep what is echoed short and on one line. */
function printable(value: string): string {
  const cleaned = value.replace(/[^\x20-\x7e]/g, '?');
  return cleaned.length > 100 ? `${cleaned.slice(0, 100)}…` : cleaned;
}
