import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Linux /proc readers: memory and CPU of one process (never its children), its descendants, its listeners. */

/** A `VmRSS`-style field of /proc/<pid>/status in bytes, or NaN when the process is gone. */
export function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Direct children of `pid` (all threads), from /proc/<pid>/task/<tid>/children. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text) for (const child of text.split(/\s+/)) out.push(Number(child));
    }
  } catch {
    // gone, or /proc not available: no children we can see
  }
  return out;
}

/** Every descendant of `pid`, breadth first. */
export function descendantPids(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of childPids(next)) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** SIGKILLs `pid`'s process group (stdio servers lead their own) and `pid`; ignores the gone. */
export function killGroup(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** CPU time (user + system) `pid` has used so far, in ms; 10 ms resolution (USER_HZ = 100). */
export function cpuTimeMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5), counted from the state field (3) onwards.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

export interface ListeningSocket {
  /** Dotted IPv4, or the eight groups of an IPv6 address written out in full. */
  address: string;
  port: number;
}

/**
 * The TCP sockets `pid` is listening on: the LISTEN entries of /proc/<pid>/net/tcp and tcp6 whose
 * inode is one of the process's own file descriptors. How the bench proves a peer bound
 * 127.0.0.1 and nothing else.
 */
export function listeningSockets(pid: number): ListeningSocket[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        if (inode) inodes.add(inode);
      } catch {
        // closed while we looked
      }
    }
  } catch {
    return [];
  }
  const out: ListeningSocket[] = [];
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
      const fields = line.trim().split(/\s+/);
      const [local, state, inode] = [fields[1], fields[3], fields[9]];
      const LISTEN = '0A';
      if (local === undefined || state !== LISTEN || inode === undefined || !inodes.has(inode)) continue;
      const [hex = '', port = '0'] = local.split(':');
      out.push({ address: decodeProcAddress(hex), port: Number.parseInt(port, 16) });
    }
  }
  return out;
}

export function isLoopbackAddress(address: string): boolean {
  return address.startsWith('127.') || address === '0000:0000:0000:0000:0000:0000:0000:0001' || address.startsWith('0000:0000:0000:0000:0000:ffff:7f');
}

/** /proc/net/tcp{,6} write addresses as 32-bit words in host (little-endian) byte order. */
function decodeProcAddress(hex: string): string {
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8) {
    const chunk = hex.slice(word, word + 8);
    for (let i = 6; i >= 0; i -= 2) bytes.push(Number.parseInt(chunk.slice(i, i + 2), 16));
  }
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < bytes.length; i += 2) groups.push((((bytes[i] as number) << 8) | (bytes[i + 1] as number)).toString(16).padStart(4, '0'));
  return groups.join(':');
}
