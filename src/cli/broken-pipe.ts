/**
 * `switchboard tools | head -1`: once `head` has its line it exits, and the next write to our
 * stdout fails with EPIPE, emitted as an 'error' on process.stdout. Unhandled, that is a stack
 * trace and exit 1; for a client command the reader simply wants no more, so end at once with
 * status 0, as `ls | head -1` does. `serve` is left out: a daemon whose log pipe breaks keeps
 * serving its clients rather than dying mid-call.
 */
export function endQuietlyOnBrokenPipe(command: string | undefined, proc: NodeJS.Process = process): void {
  if (command === 'serve') return;
  for (const stream of [proc.stdout, proc.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') proc.exit(0);
      throw err;
    });
  }
}
