import { isIP } from 'node:net';
import { errorMessage } from '../errors.js';

/**
 * How long the probe of a port's holder may take. A start that fails should fail quickly, but a
 * Switchboard that is busy (or a machine that is) may take more than a second to answer its
 * `/health`: at 1 s, a daemon on a two-core box at load ~20 was named "another program" (issue #34).
 * The wait is only ever paid when the port is taken and its holder stays silent.
 */
const PROBE_TIMEOUT_MS = 3_000;

/** `[::1]` for an IPv6 literal, the host unchanged otherwise. */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * Where a daemon bound to `host` is reached from this machine: a wildcard address is not one
 * you can connect to, its loopback twin is.
 */
function reachableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

/**
 * Whether what holds `host:port` answers `/health` as a Switchboard does (`{"status":"ok"}`).
 * Anything else — no answer in time, another status, not JSON — is some other program.
 */
export async function holderIsSwitchboard(host: string, port: number, fetchImpl: typeof fetch = fetch): Promise<boolean> {
  try {
    const res = await fetchImpl(`http://${urlHost(reachableHost(host))}:${port}/health`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    if (res.status !== 200) return false;
    const body = (await res.json()) as unknown;
    return typeof body === 'object' && body !== null && (body as { status?: unknown }).status === 'ok';
  } catch {
    return false;
  }
}

/**
 * The one line `serve` prints when it cannot bind: what is wrong and what to do about it. A port
 * in use is the common case, and most often it is held by a Switchboard already running.
 */
export async function describeListenFailure(err: unknown, host: string, port: number, fetchImpl: typeof fetch = fetch): Promise<string> {
  const where = `${urlHost(host)}:${port}`;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    if (await holderIsSwitchboard(host, port, fetchImpl)) {
      const url = `http://${urlHost(reachableHost(host))}:${port}`;
      return `port ${port} is in use by another Switchboard (${url}/health answers): one is already running — talk to it (switchboard status --url ${url}), stop it first, or start this one with --port <other>`;
    }
    return `port ${port} on ${host} is in use by another program: stop it, or start Switchboard with --port <other> (or "port" in its config file)`;
  }
  if (code === 'EACCES') return `cannot listen on ${where}: permission denied (ports below 1024 need privileges; use --port <other>)`;
  if (code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: no such address on this machine (check --host)`;
  return `cannot listen on ${where}: ${errorMessage(err)}`;
}
