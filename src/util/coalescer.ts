/**
 * Runs a job at most once at a time, with at most one more run queued behind it: a burst of
 * requests (a `list_changed` storm, a flurry of file events) costs two runs, never one per request.
 */
export class Coalescer {
  private running: Promise<void> | undefined;
  private queued = false;

  /**
   * @param job the work; it sees the latest state when it starts, so a queued run covers every
   *   request made while the previous one ran.
   * @param shouldRepeat checked before a queued run starts; false drops it (say, the connection
   *   it was for is gone). @default always
   */
  constructor(
    private readonly job: () => Promise<void>,
    private readonly shouldRepeat: () => boolean = () => true,
  ) {}

  /** Asks for a run: starts one now, or queues one behind the run in flight. */
  request(): void {
    if (this.running) {
      this.queued = true;
      return;
    }
    this.running = (async () => {
      do {
        this.queued = false;
        await this.job();
      } while (this.queued && this.shouldRepeat());
    })().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once nothing runs or is queued. */
  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }
}
