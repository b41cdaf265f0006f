import type { Client, Transport } from '@modelcontextprotocol/client';
import type { StderrRing } from './stderr-ring.js';
import { StdioProcessTransport } from './stdio-transport.js';

/**
 * How a connection's failure is told: the child's exit and its last stderr lines — the server's
 * own account of what went wrong — and a write that failed because the child just died.
 */

const STDERR_TAIL_LINES = 10;

/** How long a failed write waits for the child's exit to be seen, to report it. */
export const BROKEN_PIPE_WAIT_MS = 1_000;

export function isBrokenPipe(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || (err instanceof Error && err.message === 'Not connected');
}

export function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null } | undefined): string {
  if (!exit) return '';
  return exit.signal ? ` (killed by ${exit.signal})` : ` (exited with code ${exit.code})`;
}

/** Appends the last stderr lines, the server's own account of what went wrong. */
export function withStderr(message: string, stderr: StderrRing): string {
  const tail = stderr.tail(STDERR_TAIL_LINES);
  return tail ? `${message}\nstderr:\n${tail}` : message;
}

/** The lines each failed connect attempt's server wrote, keyed by the attempt's error. */
const attemptOutputs = new WeakMap<object, readonly string[]>();

/**
 * Keeps what the server wrote during a failed connect attempt with the attempt's error: there is
 * no connection to read it from afterwards, and it is what `switchboard logs <server>` and
 * `GET /servers/:name` (`stderrTail`) must show (issue #36 item 4). Returns `err`.
 */
export function withAttemptOutput<T>(err: T, stderr: StderrRing): T {
  if (typeof err === 'object' && err !== null && !attemptOutputs.has(err)) attemptOutputs.set(err, stderr.lines());
  return err;
}

/** What the server of a failed connect attempt wrote (see withAttemptOutput); undefined for any other error. */
export function attemptOutputOf(err: unknown): readonly string[] | undefined {
  return typeof err === 'object' && err !== null ? attemptOutputs.get(err) : undefined;
}

/**
 * Closes the SDK client and, for stdio, waits for the process group to be gone. `client.close()`
 * alone is not enough: after a failed initialize the SDK has already let go of the transport
 * (`void this.close()`) without waiting for it.
 */
export async function closeClient(client: Client, transport: Transport): Promise<void> {
  await client.close().catch(() => {});
  if (transport instanceof StdioProcessTransport) await transport.close();
}
