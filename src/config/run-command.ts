import { spawn } from 'node:child_process';

export type CommandResult =
  { ok: true; stdout: string } | { ok: false; reason: 'failed to start' | 'timed out' | 'output too large' | 'printed nothing' | `exited with ${string}` };

/** How long to wait for a killed command to go away before answering anyway. */
const KILL_GRACE_MS = 1_000;

export interface RunCommandOptions {
  timeoutMs: number;
  /** @default 1 MiB */
  maxOutputBytes?: number;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
}

/**
 * Runs `command` with `/bin/sh -c` and resolves with its trimmed stdout. Never rejects. The
 * shell gets its own process group so a timeout kills what it started too (`sh -c "op read …"`
 * may fork); stderr is discarded because secret tools print secrets in their errors.
 */
export function runShellCommand(command: string, opts: RunCommandOptions): Promise<CommandResult> {
  const maxBytes = opts.maxOutputBytes ?? 1024 * 1024;
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], {
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
      env: opts.env ?? process.env,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let timedOut = false;
    let grace: NodeJS.Timeout | undefined;

    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const finish = (result: CommandResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      resolve(result);
    };
    // At the deadline kill the group, then answer once the shell is gone (so no process is left
    // behind when we return); the fallback covers a grandchild that escaped the group and keeps
    // the pipe open.
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
      grace = setTimeout(() => finish({ ok: false, reason: 'timed out' }), KILL_GRACE_MS);
    }, opts.timeoutMs);

    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        killGroup();
        finish({ ok: false, reason: 'output too large' });
      } else {
        chunks.push(chunk);
      }
    });
    child.once('error', () => finish({ ok: false, reason: 'failed to start' }));
    child.once('close', (code, signal) => {
      if (timedOut) {
        finish({ ok: false, reason: 'timed out' });
      } else if (code !== 0) {
        finish({ ok: false, reason: `exited with ${code === null ? `signal ${signal}` : `code ${code}`}` });
      } else {
        const stdout = Buffer.concat(chunks).toString('utf8').trim();
        finish(stdout === '' ? { ok: false, reason: 'printed nothing' } : { ok: true, stdout });
      }
    });
  });
}
