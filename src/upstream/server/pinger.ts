import type { Clock, ClockTimer } from '../../util/clock.js';
import type { ServerConnection } from '../transport/connection.js';

/**
 * Health pings of one connection (SPEC §6): every `intervalMs`, each bounded by `timeoutMs`; at
 * most one in flight. A failed ping goes to `onFailure` and stops the pings — the connection is
 * about to be replaced. `now()` pings at once (a transport error may mean the server is gone).
 */
export class Pinger {
  private timer: ClockTimer | undefined;
  private inFlight = false;
  private stopped = false;

  constructor(
    private readonly connection: ServerConnection,
    private readonly settings: { intervalMs: number; timeoutMs: number },
    private readonly clock: Clock,
    private readonly onFailure: (err: unknown) => void,
  ) {}

  start(): void {
    this.schedule();
  }

  now(): void {
    if (this.stopped || this.inFlight) return;
    this.clock.clearTimeout(this.timer);
    void this.ping();
  }

  stop(): void {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.stopped || this.settings.intervalMs <= 0) return;
    this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => void this.ping(), this.settings.intervalMs);
  }

  private async ping(): Promise<void> {
    this.timer = undefined;
    if (this.stopped || this.inFlight) return;
    this.inFlight = true;
    try {
      await this.connection.ping({ timeoutMs: this.settings.timeoutMs });
    } catch (err) {
      if (!this.stopped) this.onFailure(err);
      return;
    } finally {
      this.inFlight = false;
    }
    this.schedule();
  }
}
