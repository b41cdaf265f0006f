import type { Logger } from 'pino';
import { appliedOf, applyPlan, discoveryAsApplied } from './apply-plan.js';
import { DiscoveryIssueLog } from './discovery-issues.js';
import { planReconcile, type AppliedServers } from '../config/reconcile-plan.js';
import { restartWarning } from '../config/restart-settings.js';
import type { DiscoveryResult, RestartSettings } from '../config/types.js';
import { ERROR_CATALOGUE, errorMessage, SwitchboardError, type ErrorInfo } from '../errors.js';
import type { PublishEvent } from '../events/daemon-events.js';
import type { MCPManager, ServerError } from '../upstream/manager.js';
import type { ServerDetail } from '../upstream/server-snapshot.js';

/** The path reported for a hard discovery failure, as the original loader did. */
export const DISCOVERY_FAILURE_PATH = '.mcp.json';

export interface LoadError {
  /** Server name, or `.mcp.json` for a hard discovery failure. */
  path: string;
  /** `DISCOVERY_FAILED` for a hard discovery failure, else why the server failed. */
  error: ErrorInfo;
}

export interface ReconcilerOptions {
  manager: MCPManager;
  /** Runs discovery afresh. */
  discover: () => Promise<DiscoveryResult>;
  /** `config.changed` goes here once a change is applied. */
  publish: PublishEvent;
  log: Logger;
  /** Called with the config files of every successful discovery (the live-config watcher). */
  discovered?: (files: readonly string[]) => void;
}

/** One server found by `findOne`, ready for `applyOne`. */
export interface FoundServer {
  name: string;
  discovery: DiscoveryResult;
  /** Its config now; undefined when it went from the config since it was started. */
  entry: AppliedServers[string] | undefined;
}

const EMPTY_DISCOVERY: DiscoveryResult = { configs: {}, sources: {}, shadowed: [], skipped: [], warnings: [], exaApiKeys: [] };

/**
 * Which servers run, and why: discovery, what was applied of it, and moving the manager from one
 * to the next (SPEC §8). Not serialised here; the runtime calls in from its queue only.
 */
export class Reconciler {
  private discovery: DiscoveryResult = EMPTY_DISCOVERY;
  /** What runs: the config and source each server was connected with. */
  private applied: AppliedServers = {};
  private discoveryError: ErrorInfo | undefined;
  private lastErrors: LoadError[] = [];
  private readonly issues: DiscoveryIssueLog;
  /**
   * Switchboard's own restart-only settings as the first discovery read them: what this process
   * runs with (`undefined`: unknown, and then no later file is compared; `null`: no discovery yet).
   */
  private startedWith: RestartSettings | undefined | null = null;
  /** `kept` of the last reconcile: a server still on its last good config is no news the second time. */
  private lastKept: readonly string[] = [];

  constructor(private readonly options: ReconcilerOptions) {
    this.issues = new DiscoveryIssueLog(options.log);
  }

  /** The last discovery as applied (warnings, shadowed entries, sources), for `/status`. */
  get lastDiscovery(): DiscoveryResult {
    return this.discovery;
  }

  get lastDiscoveryError(): ErrorInfo | undefined {
    return this.discoveryError;
  }

  /** Errors of the last start or reload, and of servers that failed since. */
  get errors(): readonly LoadError[] {
    return this.lastErrors;
  }

  /** Start, or a forced reload: discovers and connects every server. */
  async discoverAndConnect(cause: 'startup' | 'reload'): Promise<LoadError[]> {
    const { manager, log } = this.options;
    try {
      this.show(await this.rediscover());
    } catch {
      // A loader that throws must not take the daemon down: serve nothing and say why.
      this.discovery = EMPTY_DISCOVERY;
      this.applied = {};
      log.error({ err: this.discoveryError?.message }, 'discovery failed');
      this.lastErrors = [this.discoveryFailure()];
      return this.lastErrors;
    }
    this.lastKept = [];
    this.applied = appliedOf(this.discovery.configs, this.discovery.sources);
    // Failures are logged once, by the manager, as each server's status changes.
    const { errors } = await manager.connectServers(this.discovery.configs, this.discovery.sources, { cause });
    this.lastErrors = errors.map(toLoadError);
    return this.lastErrors;
  }

  /**
   * Rediscovers and moves only the servers whose config moved. A hard discovery failure keeps
   * everything running (the error is in `/status`). On a file change only added and changed
   * servers connect; on `POST /reload` every server that is not connected is tried again.
   */
  async reconcile(cause: 'watch' | 'reload', files: string[]): Promise<LoadError[]> {
    const { manager, log } = this.options;
    let discovery: DiscoveryResult;
    try {
      discovery = await this.rediscover();
    } catch {
      log.error({ err: this.discoveryError?.message }, 'discovery failed; the running servers are kept');
      this.lastErrors = [this.discoveryFailure(), ...this.failures()];
      return this.lastErrors;
    }
    const plan = planReconcile(this.applied, discovery);
    const warningsBefore = JSON.stringify(this.discovery.warnings);
    this.applied = plan.next;
    // Each problem (a kept server among them) is logged once, when it appears or changes.
    this.show(discoveryAsApplied(discovery, this.applied, plan.kept));
    const keptChanged = plan.kept.join('\0') !== this.lastKept.join('\0');
    this.lastKept = plan.kept;
    const connect = cause === 'reload' ? Object.keys(plan.next) : [...plan.added, ...plan.changed];
    const errors = await applyPlan(manager, plan, connect, log);
    this.lastErrors = this.failures();
    const moved = plan.added.length + plan.removed.length + plan.changed.length > 0;
    if (moved || keptChanged || JSON.stringify(this.discovery.warnings) !== warningsBefore) {
      const { added, removed, changed, kept } = plan;
      // `kept`: running on their last good config (their entry or file is broken); `unchanged`: running as configured.
      const unchanged = plan.unchanged.filter((name) => !kept.includes(name));
      log.info({ cause, files, added, removed, changed, kept, unchanged }, 'config applied');
      this.options.publish({ type: 'config.changed', cause, files, added, removed, changed, kept });
    }
    return errors.map(toLoadError);
  }

  /**
   * One server's config as discovery gives it now. A name that is nowhere — not in the config,
   * not running — is a 404 that changes nothing.
   */
  async findOne(name: string): Promise<FoundServer> {
    const discovery = await this.rediscover();
    const entry = planReconcile(this.applied, discovery).next[name];
    if (!entry && !this.options.manager.hasServer(name)) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
    return { name, discovery, entry };
  }

  /** Reconnects a found server with its current config; one gone from the config is disconnected and forgotten. */
  async applyOne({ name, discovery, entry }: FoundServer): Promise<ServerDetail> {
    const { manager } = this.options;
    const { [name]: _previous, ...others } = this.applied;
    this.applied = entry ? { ...others, [name]: entry } : others;
    this.show(discoveryAsApplied(discovery, this.applied, []));
    if (!entry) {
      // Gone from config since the last start: disconnect it, report it once, forget it.
      await manager.disconnectServer(name);
      const last = detailOf(manager, name);
      manager.forgetServer(name);
      return last;
    }
    if (manager.hasServer(name)) await manager.disconnectServer(name);
    await manager.connectServers({ [name]: entry.config }, { [name]: entry.source }, { cause: 'reload' });
    return detailOf(manager, name);
  }

  private async rediscover(): Promise<DiscoveryResult> {
    try {
      const discovery = await this.options.discover();
      this.discoveryError = undefined;
      this.options.discovered?.(discovery.files ?? []);
      return discovery;
    } catch (err) {
      // The loader's own message says what went wrong; the code says it was discovery.
      this.discoveryError = { code: 'DISCOVERY_FAILED', message: errorMessage(err) };
      throw new SwitchboardError('DISCOVERY_FAILED', `Discovery failed: ${this.discoveryError.message}`, { cause: err });
    }
  }

  /**
   * Makes `discovery` the one `/status` shows, with a warning while Switchboard's own file asks
   * for a setting only a restart applies, and logs what is new among its problems.
   */
  private show(discovery: DiscoveryResult): void {
    if (this.startedWith === null) this.startedWith = discovery.restartSettings;
    const restart = restartWarning(this.startedWith, discovery.restartSettings);
    this.discovery = restart ? { ...discovery, warnings: [...discovery.warnings, restart] } : discovery;
    this.issues.update(this.discovery);
  }

  /** The synthetic error of a hard discovery failure (SPEC §2), as the original loader gave it. */
  private discoveryFailure(): LoadError {
    return { path: DISCOVERY_FAILURE_PATH, error: this.discoveryError ?? { code: 'DISCOVERY_FAILED', message: ERROR_CATALOGUE.DISCOVERY_FAILED.message } };
  }

  private failures(): LoadError[] {
    return this.options.manager
      .listServers()
      .filter((server) => server.status === 'failed')
      .map((server) => ({ path: server.name, error: server.lastError ?? { code: 'UPSTREAM_CONNECT_FAILED', message: `Server "${server.name}" failed` } }));
  }
}

/** The server's detail; a server that vanished meanwhile is a 404. */
export function detailOf(manager: Pick<MCPManager, 'getServer'>, name: string): ServerDetail {
  const detail = manager.getServer(name);
  if (!detail) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
  return detail;
}

function toLoadError({ server, error }: ServerError): LoadError {
  return { path: server, error };
}
