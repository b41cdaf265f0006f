/** How `serve` ends: SIGTERM/SIGINT/SIGHUP wired to the daemon's drain, and a second signal's way out. */
import type { Daemon } from '../daemon.js';
import { errorMessage } from '../errors.js';

/** Where signals come from; `process` in production. */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

export interface ShutdownWiring {
  /** @default process */
  signals?: SignalSource;
  /** Called once with 0 after a clean close, or 1 when close failed. */
  onStopped: (exitCode: number) => void;
  /** The second signal's way out, without waiting for anything. @default process.exit */
  forceExit?: (exitCode: number) => void;
}

/**
 * Holds the signals that arrive while the daemon is still starting (`serve` logs "listening"
 * before its shutdown wiring exists, and with no listener a SIGTERM kills the process outright,
 * leaving its stdio servers behind). `release()` stops holding and returns the first one caught.
 */
export function holdEarlySignals(signals: SignalSource = process): { release(): NodeJS.Signals | undefined } {
  let first: NodeJS.Signals | undefined;
  const hold = (signal: NodeJS.Signals): void => {
    first ??= signal;
  };
  for (const signal of SHUTDOWN_SIGNALS) signals.on(signal, hold);
  return {
    release() {
      for (const signal of SHUTDOWN_SIGNALS) signals.off(signal, hold);
      return first;
    },
  };
}

/**
 * SIGHUP stops like SIGTERM rather than reloading: config edits already apply live (and
 * `switchboard reload` reconciles on demand), so the HUP a daemon gets in practice is its
 * terminal or SSH session closing — and Node's default for it is to die at once, leaving the
 * stdio servers running and the database unclosed.
 */
export const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/**
 * SIGTERM/SIGINT/SIGHUP close the daemon once (in-flight calls drain within `shutdownGraceMs`); a
 * second signal while that runs forces exit 1. Returns a function that removes the handlers.
 */
export function handleShutdownSignals(
  handle: { close(): Promise<void>; daemon: Pick<Daemon, 'logger'> },
  wiring: ShutdownWiring,
  /**
   * What held the signals during startup (`holdEarlySignals`): released once these handlers are
   * on — never before, as a process with no listener loses a signal still pending in libuv — and
   * a signal it caught is acted on at once.
   */
  held?: { release(): NodeJS.Signals | undefined },
): () => void {
  const signals = wiring.signals ?? process;
  const forceExit = wiring.forceExit ?? ((code: number) => process.exit(code));
  const log = handle.daemon.logger;
  let closing = false;

  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      log.warn({ signal }, 'second signal, exiting now');
      forceExit(1);
      return;
    }
    closing = true;
    log.info({ signal }, 'shutting down');
    handle.close().then(
      () => {
        log.info('stopped');
        dispose();
        wiring.onStopped(0);
      },
      (err: unknown) => {
        log.error({ err: errorMessage(err) }, 'shutdown failed');
        dispose();
        wiring.onStopped(1);
      },
    );
  };
  const dispose = (): void => {
    for (const signal of SHUTDOWN_SIGNALS) signals.off(signal, onSignal);
  };
  for (const signal of SHUTDOWN_SIGNALS) signals.on(signal, onSignal);
  const early = held?.release();
  if (early) onSignal(early);
  return dispose;
}
