import { pino, type Logger } from 'pino';
import type { DiscoveryResult } from './config/types.js';
import { errorMessage, SwitchboardError } from './errors.js';
import type { MCPManager, ServerError } from './mcp/manager.js';
import type { ServerDetail, ServerSnapshot } from './mcp/server-snapshot.js';
import { SerialQueue } from './util/serial-queue.js';

export type RuntimeState = 'idle' | 'starting' | 'ready' | 'stopping' | 'stopped';

export interface RuntimeOptions {
  manager: MCPManager;
  /** Runs discovery afresh; called at start and on every reload. */
  discover: () => Promise<DiscoveryResult>;
  logger?: Logger;
  /** Warnings from opening the tool cache (moved aside, read-only), shown in `/status`. */
  storeWarnings?: readonly string[];
  /** Runs last in `close()`, e.g. to close a store the embedder did not open itself. */
  onClosed?: () => void;
}

/** The path reported for a hard discovery failure, as the original loader did. */
export const DISCOVERY_FAILURE_PATH = '.mcp.json';

export interface LoadError {
  /** Server name, or `.mcp.json` for a hard discovery failure. */
  path: string;
  error: string;
}

export interface ReloadOutcome {
  servers: ServerSnapshot[];
  errors: LoadError[];
}

const EMPTY_DISCOVERY: DiscoveryResult = { configs: {}, sources: {}, shadowed: [], skipped: [], warnings: [], exaApiKeys: [] };

/**
 * Discovery plus the manager, with the operator operations of SPEC §8. Start, reloads and
 * disconnects run through one queue, so they never interleave.
 */
export class SwitchboardRuntime {
  readonly manager: MCPManager;
  readonly storeWarnings: readonly string[];
  private readonly discoverFn: () => Promise<DiscoveryResult>;
  private readonly log: Logger;
  private readonly queue = new SerialQueue();
  private discovery: DiscoveryResult = EMPTY_DISCOVERY;
  private discoveryError: string | undefined;
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
  }

  get state(): RuntimeState {
    return this.currentState;
  }

  /** The last discovery result (warnings, shadowed entries, sources) for `/status`. */
  get lastDiscovery(): DiscoveryResult {
    return this.discovery;
  }

  get lastDiscoveryError(): string | undefined {
    return this.discoveryError;
  }

  /** Errors of the last start or full reload. */
  get errors(): readonly LoadError[] {
    return this.lastErrors;
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

  /** Full reload: disconnect all, rediscover, connect. */
  reloadAll(): Promise<ReloadOutcome> {
    return this.operation(null, async () => {
      await this.manager.disconnectAll();
      const errors = await this.discoverAndConnect('reload');
      return { servers: this.manager.listServers(), errors };
    });
  }

  /** Re-reads one server's config, disconnects it and connects it again; others untouched. */
  reloadServer(name: string): Promise<ServerDetail> {
    return this.operation(name, async () => {
      try {
        this.discovery = await this.discoverFn();
        this.discoveryError = undefined;
      } catch (err) {
        this.discoveryError = errorMessage(err);
        throw new SwitchboardError('INTERNAL_ERROR', `Discovery failed: ${this.discoveryError}`, { cause: err });
      }
      const config = this.discovery.configs[name];
      if (!config) {
        if (!this.manager.hasServer(name)) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
        // Gone from config since the last start: disconnect it, report it once, forget it.
        await this.manager.disconnectServer(name);
        const last = this.detail(name);
        this.manager.forgetServer(name);
        return last;
      }
      if (this.manager.hasServer(name)) await this.manager.disconnectServer(name);
      const source = this.discovery.sources[name];
      await this.manager.connectServers({ [name]: config }, source ? { [name]: source } : {}, { cause: 'reload' });
      return this.detail(name);
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

  private async operation<T>(server: string | null, work: () => Promise<T>): Promise<T> {
    this.assertAccepting();
    return this.queue.run(async () => {
      this.assertAccepting();
      this.manager.emitOperation({ type: 'reload.started', server });
      try {
        const result = await work();
        this.manager.emitOperation({ type: 'reload.finished', server, ok: true });
        return result;
      } catch (err) {
        this.manager.emitOperation({ type: 'reload.finished', server, ok: false, error: errorMessage(err) });
        throw err;
      }
    });
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

  private async discoverAndConnect(cause: 'startup' | 'reload'): Promise<LoadError[]> {
    try {
      this.discovery = await this.discoverFn();
      this.discoveryError = undefined;
    } catch (err) {
      // A loader that throws must not take the daemon down: serve nothing and say why.
      this.discoveryError = errorMessage(err);
      this.discovery = EMPTY_DISCOVERY;
      this.log.error({ err: this.discoveryError }, 'discovery failed');
      this.lastErrors = [{ path: DISCOVERY_FAILURE_PATH, error: this.discoveryError }];
      return this.lastErrors;
    }
    this.logSkipped();
    const { errors } = await this.manager.connectServers(this.discovery.configs, this.discovery.sources, { cause });
    this.lastErrors = errors.map(toLoadError);
    for (const { path, error } of this.lastErrors) this.log.warn({ server: path, err: error }, 'server failed to load');
    return this.lastErrors;
  }
}

function toLoadError({ server, error }: ServerError): LoadError {
  return { path: server, error };
}
