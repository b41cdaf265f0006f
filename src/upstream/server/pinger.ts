import type { Clock, ClockTimer } from '../../util/clock.js';
import type { ServerConnection } from '../transport/connection.js';
import type { BackPressure } from './back-pressure.js';

/**
 * Health pings of one connection (SPEC §6): every `intervalMs`, each bounded by `timeoutMs`; at
 * most one in flight. A failed ping goes to `onFailure` and stops the pings — the connection is
 * about to be replaced. `now()` pings at once (a transport error may mean the server is gone).
 *
 * A pause the server asked for (429/503 with `Retry-After`, issue #35 item 3) is kept: a ping due
 * during it waits until it ends, and a ping that failed while one held requests (refused for it,
 * or held by the transport past its deadline) is no failure: it is sent again once the pause ends.
 */
export class Pinger {
  private timer: ClockTimer | undefined;
  private inFlight = false;
  private stopped = false;

  constructor(
    private readonly connection: ServerConnection,
    private readonly settings: { intervalMs: number; timeoutMs: number },
    private readonly time: { clock: Clock; pause: BackPressure },
    private readonly onFailure: (err: unknown) => void,
  ) {}

  start(): void {
    this.schedule();
  }

  now(): void {
    if (this.stopped || this.inFlight) return;
    this.time.clock.clearTimeout(this.timer);
    void this.ping();
  }

  stop(): void {
    this.stopped = true;
    this.time.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(delayMs = this.settings.intervalMs): void {
    if (this.stopped || this.settings.intervalMs <= 0) return;
    this.time.clock.clearTimeout(this.timer);
    this.timer = this.time.clock.setTimeout(() => void this.ping(), delayMs);
  }

  private async ping(): Promise<void> {
    this.timer = undefined;
    if (this.stopped || this.inFlight) return;
    const { clock, pause } = this.time;
    const paused = pause.remainingMs();
    if (paused > 0) {
      this.schedule(paused);
      return;
    }
    const startedAt = clock.now();
    this.inFlight = true;
    try {
      await this.connection.ping({ timeoutMs: this.settings.timeoutMs });
    } catch (err) {
      if (this.stopped) return;
      if (pause.pausedAfter(startedAt)) {
        // Its end, or the usual interval when it is already over (never a ping loop on a server
        // that keeps answering 429 with `Retry-After: 0`).
        this.schedule(pause.remainingMs() || this.settings.intervalMs);
        return;
      }
      this.onFailure(err);
      return;
    } finally {
      this.inFlight = false;
    }
    this.schedule();
  }
}
