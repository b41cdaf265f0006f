import { pino, type Logger } from 'pino';
import type { DiscoveryResult } from '../config/types.js';
import { ConfigWatcher } from '../config/watch.js';
import { errorMessage, SwitchboardError, toErrorInfo, type ErrorInfo } from '../errors.js';
import type { PublishEvent, ReloadStartedEvent } from '../events/daemon-events.js';
import type { MCPManager } from '../upstream/manager.js';
import type { ServerDetail, ServerSnapshot } from '../upstream/server-snapshot.js';
import { SerialQueue } from '../util/serial-queue.js';
import { detailOf, Reconciler, type LoadError } from './reconciler.js';

export { DISCOVERY_FAILURE_PATH, type LoadError } from './reconciler.js';

export type RuntimeState = 'idle' | 'starting' | 'ready' | 'stopping' | 'stopped';

export interface RuntimeOptions {
  manager: MCPManager;
  /** Runs discovery afresh; called at start, on every reload and on every config file change. */
  discover: () => Promise<DiscoveryResult>;
  /** Where `reload.*` and `config.changed` go: the event bus. @default nowhere */
  publish?: PublishEvent;
  logger?: Logger;
  /**
   * Warnings from opening the tool cache (moved aside, read-only), shown in `/status`; a function
   * is asked at each read (a networked store's outage comes and goes).
   */
  storeWarnings?: readonly string[] | (() => readonly string[]);
  /** Runs last in `close()`, which waits for it: e.g. to close a store the embedder did not open itself. */
  onClosed?: () => void | Promise<void>;
  /**
   * Watch the config files discovery reads (and the directories where they could appear) and
   * apply edits live (SPEC §8). `debounceMs`: quiet period after the last change. @default false
   */
  watchConfig?: boolean | { debounceMs?: number };
}

export interface ReloadOutcome {
  servers: ServerSnapshot[];
  errors: LoadError[];
}

export interface ReloadOptions {
  /** Disconnect everything and connect again, as before live config. @default false */
  force?: boolean;
  /** In a cluster: the replica whose reload this one applies (daemon-events.ts `Follows`). @default none */
  follows?: string;
}

/**
 * Discovery plus the manager, with the operator operations of SPEC §8. Start, reloads, config
 * changes and disconnects run through one queue, so they never interleave; which servers run is
 * the `Reconciler`'s business, how each one runs the manager's. Operations are announced on the
 * bus (`reload.started` / `reload.finished`).
 */
export class SwitchboardRuntime {
  readonly manager: MCPManager;
  readonly #storeWarnings: readonly string[] | (() => readonly string[]);
  private readonly log: Logger;
  private readonly publish: PublishEvent;
  private readonly queue = new SerialQueue();
  private readonly watcher: ConfigWatcher | undefined;
  private readonly reconciler: Reconciler;
  private currentState: RuntimeState = 'idle';
  private readyPromise: Promise<LoadError[]> | undefined;
  private closing: Promise<void> | undefined;
  private readonly onClosed: (() => void | Promise<void>) | undefined;

  /** The store's warnings as of now (see `RuntimeOptions.storeWarnings`). */
  get storeWarnings(): readonly string[] {
    return typeof this.#storeWarnings === 'function' ? this.#storeWarnings() : this.#storeWarnings;
  }

  constructor(options: RuntimeOptions) {
    this.manager = options.manager;
    this.#storeWarnings = options.storeWarnings ?? [];
    this.onClosed = options.onClosed;
    this.log = options.logger ?? pino({ level: 'silent' });
    this.publish = options.publish ?? (() => undefined);
    const watch = options.watchConfig ?? false;
    if (watch !== false) {
      this.watcher = new ConfigWatcher({
        ...(typeof watch === 'object' && watch.debounceMs !== undefined ? { debounceMs: watch.debounceMs } : {}),
        logger: this.log.child({ component: 'watch' }),
        onChange: (files) => this.onConfigFilesChanged(files),
      });
    }
    this.reconciler = new Reconciler({
      manager: this.manager,
      discover: options.discover,
      publish: this.publish,
      log: this.log,
      discovered: (files) => this.watcher?.watch(files),
    });
  }

  get state(): RuntimeState {
    return this.currentState;
  }

  /** The last discovery result (warnings, shadowed entries, sources) for `/status`. */
  get lastDiscovery(): DiscoveryResult {
    return this.reconciler.lastDiscovery;
  }

  /** Why the last discovery failed (`DISCOVERY_FAILED`, with the loader's own message), if it did. */
  get lastDiscoveryError(): ErrorInfo | undefined {
    return this.reconciler.lastDiscoveryError;
  }

  /** Errors of the last start or reload, and of servers that failed since. */
  get errors(): readonly LoadError[] {
    return this.reconciler.errors;
  }

  /** The directories the config watcher watches (empty when live config is off). */
  get watchedDirs(): string[] {
    return this.watcher?.watchedDirs() ?? [];
  }

  /** Discovers and connects behind the startup gate; idempotent. */
  start(): Promise<LoadError[]> {
    this.readyPromise ??= this.queue.run(async () => {
      if (this.currentState !== 'idle') return [];
      this.currentState = 'starting';
      const errors = await this.reconciler.discoverAndConnect('startup');
      if (this.currentState === 'starting') this.currentState = 'ready';
      return errors;
    });
    return this.readyPromise;
  }

  /** Resolves when the startup gate has resolved (immediately when already ready). */
  whenReady(): Promise<unknown> {
    return this.readyPromise ?? this.start();
  }

  /**
   * `POST /reload`: rediscover and reconcile — added servers connect, removed ones disconnect,
   * changed ones reconnect, unchanged connected ones are left alone, and any that are not
   * connected (failed, disconnected) are tried again. `force`: disconnect all, then connect all.
   */
  reloadAll(options: ReloadOptions = {}): Promise<ReloadOutcome> {
    return this.operation(
      { server: null, ...(options.force ? { force: true } : {}), ...(options.follows !== undefined ? { follows: options.follows } : {}) },
      async () => {
        if (options.force) {
          await this.manager.disconnectAll();
          const errors = await this.reconciler.discoverAndConnect('reload');
          return { servers: this.manager.listServers(), errors };
        }
        const errors = await this.reconciler.reconcile('reload', []);
        return { servers: this.manager.listServers(), errors };
      },
      // Discovery failing is the reload failing (nothing was reloaded), though the answer still
      // lists the servers as they run; a server failing to connect is that server's own error.
      (outcome) => outcome.errors.find((e) => e.error.code === 'DISCOVERY_FAILED')?.error,
    );
  }

  /** Re-reads one server's config, disconnects it and connects it again; others untouched. */
  reloadServer(name: string, options: Pick<ReloadOptions, 'follows'> = {}): Promise<ServerDetail> {
    this.assertAccepting();
    return this.queue.run(async () => {
      this.assertAccepting();
      // Found first: a name that is nowhere is a 404 that leaves no trace on the event feed.
      const found = await this.reconciler.findOne(name);
      return this.announced({ server: name, ...(options.follows !== undefined ? { follows: options.follows } : {}) }, () => this.reconciler.applyOne(found));
    });
  }

  disconnectServer(name: string): Promise<ServerDetail> {
    this.assertAccepting();
    // A connect still in flight is abandoned now, not awaited behind the queue.
    this.manager.abortConnects(new SwitchboardError('SERVER_CLOSED', `Server "${name}" was disconnected`), name);
    return this.queue.run(async () => {
      this.assertAccepting();
      await this.manager.disconnectServer(name);
      return detailOf(this.manager, name);
    });
  }

  /**
   * Refuses further operations (503 on the HTTP side) while in-flight calls drain, and abandons
   * every connect in flight: shutdown must not wait on a server that never answers.
   */
  stopAccepting(): void {
    if (this.currentState === 'stopped' || this.currentState === 'stopping') return;
    this.currentState = 'stopping';
    this.watcher?.close();
    this.manager.abortConnects(new SwitchboardError('SHUTTING_DOWN'));
  }

  /** Stops accepting operations and disconnects everything; idempotent and joinable. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stopAccepting();
      await this.queue.run(() => this.manager.disconnectAll());
      this.currentState = 'stopped';
      await this.onClosed?.();
    })();
    return this.closing;
  }

  private operation<T>(started: Omit<ReloadStartedEvent, 'type'>, work: () => Promise<T>, failureOf?: (result: T) => ErrorInfo | undefined): Promise<T> {
    this.assertAccepting();
    return this.queue.run(async () => {
      this.assertAccepting();
      return this.announced(started, work, failureOf);
    });
  }

  /**
   * Runs `work` between `reload.started` and `reload.finished`; the latter says `ok: false`, with
   * the error, when `work` throws or `failureOf` finds a failure in its result.
   */
  private async announced<T>(started: Omit<ReloadStartedEvent, 'type'>, work: () => Promise<T>, failureOf?: (result: T) => ErrorInfo | undefined): Promise<T> {
    const { server } = started;
    this.publish({ type: 'reload.started', ...started });
    try {
      const result = await work();
      const error = failureOf?.(result);
      this.publish({ type: 'reload.finished', server, ...(error ? { ok: false, error } : { ok: true }) });
      return result;
    } catch (err) {
      this.publish({ type: 'reload.finished', server, ok: false, error: toErrorInfo(err) });
      throw err;
    }
  }

  private assertAccepting(): void {
    if (this.currentState === 'stopping' || this.currentState === 'stopped') {
      throw new SwitchboardError('SHUTTING_DOWN');
    }
  }

  /** Live config: a watched file changed. Applied behind whatever operation is running. */
  private onConfigFilesChanged(files: string[]): void {
    if (this.currentState !== 'starting' && this.currentState !== 'ready') return;
    this.queue
      .run(async () => {
        if (this.currentState !== 'ready') return;
        await this.reconciler.reconcile('watch', files);
      })
      .catch((err: unknown) => this.log.error({ err: errorMessage(err) }, 'applying a config change failed'));
  }
}
