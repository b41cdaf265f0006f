import { BlockList, isIP } from 'node:net';
import { networkInterfaces, hostname } from 'node:os';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Strips `[` `]` around an IPv6 literal and a trailing dot, in lower case. */
export function bareHost(host: string): string {
  const lower = host.trim().toLowerCase().replace(/\.$/, '');
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}

/** 127.0.0.0/8, ::1 (any spelling, bracketed or IPv4-mapped) and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = bareHost(host);
  if (bare === 'localhost') return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  const address = mapped ? (mapped[1] as string) : bare;
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * Whether `host` names this machine: a loopback name, the unspecified address (which connects to
 * this machine), an address of one of its interfaces, or its host name. No DNS lookup: a name
 * that only resolves here is not caught (the instance-id loop check still is).
 */
export function isLocalHost(host: string): boolean {
  if (isLoopbackHost(host)) return true;
  const bare = bareHost(host);
  if (bare === '0.0.0.0' || bare === '::') return true;
  if (bare === hostname().toLowerCase()) return true;
  for (const addresses of Object.values(networkInterfaces())) {
    for (const info of addresses ?? []) if (info.address.toLowerCase() === bare) return true;
  }
  return false;
}
