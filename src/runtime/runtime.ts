import { pino, type Logger } from 'pino';
import { appliedOf, applyPlan, discoveryAsApplied, hasChanges } from './apply-plan.js';
import { planReconcile, type AppliedServers } from '../config/reconcile-plan.js';
import type { DiscoveryResult } from '../config/types.js';
import { ConfigWatcher } from '../config/watch.js';
import { ERROR_CATALOGUE, errorMessage, SwitchboardError, toErrorInfo, type ErrorInfo } from '../errors.js';
import type { MCPManager, ServerError } from '../mcp/manager.js';
import type { ServerDetail, ServerSnapshot } from '../mcp/upstream/server-snapshot.js';
import { SerialQueue } from '../util/serial-queue.js';

export type RuntimeState = 'idle' | 'starting' | 'ready' | 'stopping' | 'stopped';

export interface RuntimeOptions {
  manager: MCPManager;
  /** Runs discovery afresh; called at start, on every reload and on every config file change. */
  discover: () => Promise<DiscoveryResult>;
  logger?: Logger;
  /** Warnings from opening the tool cache (moved aside, read-only), shown in `/status`. */
  storeWarnings?: readonly string[];
  /** Runs last in `close()`, e.g. to close a store the embedder did not open itself. */
  onClosed?: () => void;
  /**
   * Watch the config files discovery reads (and the directories where they could appear) and
   * apply edits live (SPEC §8). `debounceMs`: quiet period after the last change. @default false
   */
  watchConfig?: boolean | { debounceMs?: number };
}

/** The path reported for a hard discovery failure, as the original loader did. */
export const DISCOVERY_FAILURE_PATH = '.mcp.json';

export interface LoadError {
  /** Server name, or `.mcp.json` for a hard discovery failure. */
  path: string;
  /** `DISCOVERY_FAILED` for a hard discovery failure, else why the server failed. */
  error: ErrorInfo;
}

export interface ReloadOutcome {
  servers: ServerSnapshot[];
  errors: LoadError[];
}

export interface ReloadOptions {
  /** Disconnect everything and connect again, as before live config. @default false */
  force?: boolean;
}

const EMPTY_DISCOVERY: DiscoveryResult = { configs: {}, sources: {}, shadowed: [], skipped: [], warnings: [], exaApiKeys: [] };

/**
 * Discovery plus the manager, with the operator operations of SPEC §8. Start, reloads, config
 * changes and disconnects run through one queue, so they never interleave. Only the manager's
 * public methods are used: which servers run is decided here, how each one runs is the manager's.
 */
export class SwitchboardRuntime {
  readonly manager: MCPManager;
  readonly storeWarnings: readonly string[];
  private readonly discoverFn: () => Promise<DiscoveryResult>;
  private readonly log: Logger;
  private readonly queue = new SerialQueue();
  private readonly watcher: ConfigWatcher | undefined;
  private discovery: DiscoveryResult = EMPTY_DISCOVERY;
  /** What runs: the config and source each server was connected with. */
  private applied: AppliedServers = {};
  private discoveryError: ErrorInfo | undefined;
  private currentState: RuntimeState = 'idle';
  private readyPromise: Promise<LoadError[]> | undefined;
  private lastErrors: LoadError[] = [];
  private closing: Promise<void> | undefined;
  private readonly loggedSkips = new Set<string>();
  private readonly onClosed: (() => void) | undefined;

  constructor(options: RuntimeOptions) {
    this.manager = options.manager;
    this.discoverFn = options.discover;
    this.storeWarnings = options.storeWarnings ?? [];
    this.onClosed = options.onClosed;
    this.log = options.logger ?? pino({ level: 'silent' });
    const watch = options.watchConfig ?? false;
    if (watch !== false) {
      this.watcher = new ConfigWatcher({
        ...(typeof watch === 'object' && watch.debounceMs !== undefined ? { debounceMs: watch.debounceMs } : {}),
        logger: this.log.child({ component: 'watch' }),
        onChange: (files) => this.onConfigFilesChanged(files),
      });
    }
  }

  get state(): RuntimeState {
    return this.currentState;
  }

  /** The last discovery result (warnings, shadowed entries, sources) for `/status`. */
  get lastDiscovery(): DiscoveryResult {
    return this.discovery;
  }

  /** Why the last discovery failed (`DISCOVERY_FAILED`, with the loader's own message), if it did. */
  get lastDiscoveryError(): ErrorInfo | undefined {
    return this.discoveryError;
  }

  /** Errors of the last start or reload, and of servers that failed since. */
  get errors(): readonly LoadError[] {
    return this.lastErrors;
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
      const errors = await this.discoverAndConnect('startup');
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
      null,
      async () => {
        if (options.force) {
          await this.manager.disconnectAll();
          const errors = await this.discoverAndConnect('reload');
          return { servers: this.manager.listServers(), errors };
        }
        const errors = await this.reconcile('reload', []);
        return { servers: this.manager.listServers(), errors };
      },
      // Discovery failing is the reload failing (nothing was reloaded), though the answer still
      // lists the servers as they run; a server failing to connect is that server's own error.
      (outcome) => outcome.errors.find((e) => e.error.code === 'DISCOVERY_FAILED')?.error,
    );
  }

  /** Re-reads one server's config, disconnects it and connects it again; others untouched. */
  reloadServer(name: string): Promise<ServerDetail> {
    this.assertAccepting();
    return this.queue.run(async () => {
      this.assertAccepting();
      // Found first: a name that is nowhere is a 404 that leaves no trace on the event feed.
      const discovery = await this.rediscover();
      const entry = planReconcile(this.applied, discovery).next[name];
      if (!entry && !this.manager.hasServer(name)) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
      return this.announced(name, async () => {
        const { [name]: _previous, ...others } = this.applied;
        this.applied = entry ? { ...others, [name]: entry } : others;
        this.discovery = discoveryAsApplied(discovery, this.applied, []);
        if (!entry) {
          // Gone from config since the last start: disconnect it, report it once, forget it.
          await this.manager.disconnectServer(name);
          const last = this.detail(name);
          this.manager.forgetServer(name);
          return last;
        }
        if (this.manager.hasServer(name)) await this.manager.disconnectServer(name);
        await this.manager.connectServers({ [name]: entry.config }, { [name]: entry.source }, { cause: 'reload' });
        return this.detail(name);
      });
    });
  }

  disconnectServer(name: string): Promise<ServerDetail> {
    this.assertAccepting();
    // A connect still in flight is abandoned now, not awaited behind the queue.
    this.manager.abortConnects(new SwitchboardError('SERVER_CLOSED', `Server "${name}" was disconnected`), name);
    return this.queue.run(async () => {
      this.assertAccepting();
      await this.manager.disconnectServer(name);
      return this.detail(name);
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
      this.onClosed?.();
    })();
    return this.closing;
  }

  private operation<T>(server: string | null, work: () => Promise<T>, failureOf?: (result: T) => ErrorInfo | undefined): Promise<T> {
    this.assertAccepting();
    return this.queue.run(async () => {
      this.assertAccepting();
      return this.announced(server, work, failureOf);
    });
  }

  /**
   * Runs `work` between `reload.started` and `reload.finished`; the latter says `ok: false`, with
   * the error, when `work` throws or `failureOf` finds a failure in its result.
   */
  private async announced<T>(server: string | null, work: () => Promise<T>, failureOf?: (result: T) => ErrorInfo | undefined): Promise<T> {
    this.manager.emitOperation({ type: 'reload.started', server });
    try {
      const result = await work();
      const error = failureOf?.(result);
      this.manager.emitOperation({ type: 'reload.finished', server, ...(error ? { ok: false, error } : { ok: true }) });
      return result;
    } catch (err) {
      this.manager.emitOperation({ type: 'reload.finished', server, ok: false, error: toErrorInfo(err) });
      throw err;
    }
  }

  private assertAccepting(): void {
    if (this.currentState === 'stopping' || this.currentState === 'stopped') {
      throw new SwitchboardError('SHUTTING_DOWN');
    }
  }

  private detail(name: string): ServerDetail {
    const detail = this.manager.getServer(name);
    if (!detail) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
    return detail;
  }

  /** Each skipped entry is logged the first time it is seen, not on every reload. */
  private logSkipped(): void {
    for (const entry of this.discovery.skipped) {
      const key = `${entry.name}\u0000${entry.source.path}`;
      if (this.loggedSkips.has(key)) continue;
      this.loggedSkips.add(key);
      this.log.warn({ server: entry.name, path: entry.source.path }, `server skipped: ${entry.message}`);
    }
  }

  private async rediscover(): Promise<DiscoveryResult> {
    try {
      const discovery = await this.discoverFn();
      this.discoveryError = undefined;
      this.watcher?.watch(discovery.files ?? []);
      return discovery;
    } catch (err) {
      // The loader's own message says what went wrong; the code says it was discovery.
      this.discoveryError = { code: 'DISCOVERY_FAILED', message: errorMessage(err) };
      throw new SwitchboardError('DISCOVERY_FAILED', `Discovery failed: ${this.discoveryError.message}`, { cause: err });
    }
  }

  private async discoverAndConnect(cause: 'startup' | 'reload'): Promise<LoadError[]> {
    try {
      this.discovery = await this.rediscover();
    } catch {
      // A loader that throws must not take the daemon down: serve nothing and say why.
      this.discovery = EMPTY_DISCOVERY;
      this.applied = {};
      this.log.error({ err: this.discoveryError?.message }, 'discovery failed');
      this.lastErrors = [this.discoveryFailure()];
      return this.lastErrors;
    }
    this.logSkipped();
    this.applied = appliedOf(this.discovery.configs, this.discovery.sources);
    // Failures are logged once, by the manager, as each server's status changes.
    const { errors } = await this.manager.connectServers(this.discovery.configs, this.discovery.sources, { cause });
    this.lastErrors = errors.map(toLoadError);
    return this.lastErrors;
  }

  /** Live config: a watched file changed. Applied behind whatever operation is running. */
  private onConfigFilesChanged(files: string[]): void {
    if (this.currentState !== 'starting' && this.currentState !== 'ready') return;
    this.queue
      .run(async () => {
        if (this.currentState !== 'ready') return;
        await this.reconcile('watch', files);
      })
      .catch((err: unknown) => this.log.error({ err: errorMessage(err) }, 'applying a config change failed'));
  }

  /**
   * Rediscovers and moves only the servers whose config moved. A hard discovery failure keeps
   * everything running (the error is in `/status`). On a file change only added and changed
   * servers connect; on `POST /reload` every server that is not connected is tried again.
   */
  private async reconcile(cause: 'watch' | 'reload', files: string[]): Promise<LoadError[]> {
    let discovery: DiscoveryResult;
    try {
      discovery = await this.rediscover();
    } catch {
      this.log.error({ err: this.discoveryError?.message }, 'discovery failed; the running servers are kept');
      this.lastErrors = [this.discoveryFailure(), ...this.failures()];
      return this.lastErrors;
    }
    const plan = planReconcile(this.applied, discovery);
    const warningsBefore = JSON.stringify(this.discovery.warnings);
    this.applied = plan.next;
    this.discovery = discoveryAsApplied(discovery, this.applied, plan.kept);
    this.logSkipped();
    for (const name of plan.kept) {
      this.log.warn({ server: name, path: this.applied[name]?.source.path }, 'config now invalid; keeping the last good config');
    }
    const connect = cause === 'reload' ? Object.keys(plan.next) : [...plan.added, ...plan.changed];
    const errors = await applyPlan(this.manager, plan, connect, this.log);
    this.lastErrors = this.failures();
    if (hasChanges(plan) || JSON.stringify(this.discovery.warnings) !== warningsBefore) {
      const { added, removed, changed, kept } = plan;
      this.log.info({ cause, files, added, removed, changed, kept }, 'config applied');
      this.manager.emitOperation({ type: 'config.changed', cause, files, added, removed, changed, kept });
    }
    return errors.map(toLoadError);
  }

  /** The synthetic error of a hard discovery failure (SPEC §2), as the original loader gave it. */
  private discoveryFailure(): LoadError {
    return { path: DISCOVERY_FAILURE_PATH, error: this.discoveryError ?? { code: 'DISCOVERY_FAILED', message: ERROR_CATALOGUE.DISCOVERY_FAILED.message } };
  }

  private failures(): LoadError[] {
    return this.manager
      .listServers()
      .filter((server) => server.status === 'failed')
      .map((server) => ({ path: server.name, error: server.lastError ?? { code: 'UPSTREAM_CONNECT_FAILED', message: `Server "${server.name}" failed` } }));
  }
}

function toLoadError({ server, error }: ServerError): LoadError {
  return { path: server, error };
}
