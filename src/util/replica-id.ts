import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * Who this replica is in a cluster (issue #28) and where the others reach it. The id is new at
 * every start: a restarted replica has lost its sessions and parked calls, and ids that name it
 * (session ids, continuation tokens, approval ids) must not find the new process by mistake.
 */

/** Twelve hex digits: short enough to prefix ids with, unique enough for a cluster's lifetime. */
const REPLICA_ID = /^[0-9a-f]{12}$/;

export function newReplicaId(): string {
  return randomBytes(6).toString('hex');
}

/** `<replica>.<rest>`: an id that names the replica owning what it identifies. */
export function ownedId(replicaId: string, rest: string): string {
  return `${replicaId}.${rest}`;
}

/** The replica an id names, or undefined for an id no replica prefixed (a lone daemon's, a relay state). */
export function ownerOf(id: string): string | undefined {
  const dot = id.indexOf('.');
  if (dot !== 12) return undefined;
  const owner = id.slice(0, dot);
  return REPLICA_ID.test(owner) ? owner : undefined;
}

/**
 * The URL other replicas forward to: `SWITCHBOARD_ADVERTISE_URL` when set (a pod's address,
 * say), else the address the daemon listens on — and for a wildcard bind the first
 * non-internal IPv4 address of this machine.
 */
export function advertisedUrl(host: string, port: number, env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.SWITCHBOARD_ADVERTISE_URL?.trim();
  if (configured) return configured.replace(/\/+$/, '');
  let address = host;
  if (host === '0.0.0.0' || host === '::') address = externalIPv4() ?? '127.0.0.1';
  return `http://${isIP(address) === 6 ? `[${address}]` : address}:${port}`;
}

function externalIPv4(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const entry of addresses ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  }
  return undefined;
}
