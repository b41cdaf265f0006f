import { isLocalHost } from '../util/loopback.js';

export const SELF_REFERENCE_MESSAGE = 'points at this Switchboard itself';

/**
 * Whether an http/sse `url` names this machine on a port this daemon listens on (SPEC §11). The
 * README's own agent entry (`http://127.0.0.1:7337/mcp`) lands in client config files that
 * discovery reads; connecting to it would aggregate the daemon into itself, again on every
 * reload. Another Switchboard (another port, another host) stays a legitimate upstream.
 */
export function pointsAtSelf(url: string | undefined, selfPorts: readonly number[]): boolean {
  if (url === undefined || selfPorts.length === 0) return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return selfPorts.includes(port) && isLocalHost(parsed.hostname);
}
