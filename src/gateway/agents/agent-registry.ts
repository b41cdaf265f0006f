import { timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { AgentSettingsSchema, type AgentConfig, type AgentSettings } from '../../config/agent-schema.js';
import { runShellCommand } from '../../config/run-command.js';
import { SwitchboardError, errorMessage } from '../../errors.js';
import type { AgentChange, PublishEvent } from '../../events/daemon-events.js';
import type { AgentStore, StoredAgent, StoredAgentKey } from '../../store/ports.js';
import type { Clock } from '../../util/clock.js';
import { digestOf, isExpired, mintAgentKey, mintOperatorKey, parseAgentKey, secretMatches } from './agent-keys.js';
import type { Agent, AgentInfo, AgentStatus, KeyVerdict } from './agent-types.js';
import { keepOperatorKey, loadOrCreateOperatorKey, operatorKeyExists } from './operator-key.js';

export type { Agent, AgentInfo, AgentSource, AgentStatus, KeyVerdict } from './agent-types.js';

export interface AgentRegistryOptions {
  /** The config's valid `agents` entries. */
  config: Readonly<Record<string, AgentConfig>>;
  store: AgentStore;
  /** The config's `token`: the operator key. */
  token?: string;
  /** Where to keep a generated operator key when agents exist and no `token` does (operator-key.ts). */
  operatorKeyPath?: string;
  /**
   * In a cluster without a `token`: the one operator key every replica accepts, from the shared
   * store (issue #43 item 4). Also written to `operatorKeyPath` for the CLI here.
   */
  sharedOperatorKey?: string;
  clock: Pick<Clock, 'now'>;
  logger: Pick<Logger, 'warn' | 'error' | 'info'>;
  /** Deadline of a `!cmd` key. @default 10000 */
  commandTimeoutMs?: number;
  /** Where each change (`agent.changed`, a name and never a key) goes: the event bus. @default nowhere */
  publish?: PublishEvent;
  /** Agents also sign in another way (a JWT, `agentAuth.jwt`): keys are required from the start. @default false */
  tokenAgents?: boolean;
}

interface ConfigAgent {
  settings: AgentSettings;
  /** Whether the file gives a key (resolved or not). */
  keyInConfig: boolean;
}

/**
 * Every agent and key (issue #22): config agents with their settings and (hashed) config keys,
 * agents added at run time with their salted key hashes (kept in the store, mirrored here), and
 * the operator key. Maps a name to the agent's settings and a presented key to who it is. Its
 * only writer, it announces each stored change (`agent.changed`): `/events` closes ended keys'
 * feeds, the cluster has the other replicas re-read the store.
 */
export class AgentRegistry {
  readonly #options: AgentRegistryOptions;
  readonly #config = new Map<string, ConfigAgent>();
  readonly #stored = new Map<string, StoredAgent>();
  /** Issued keys by id. */
  readonly #keys = new Map<string, StoredAgentKey>();
  /** Config keys as hex SHA-256 → agent name. */
  readonly #configKeys = new Map<string, string>();
  #operator: Buffer | undefined;
  #loaded = false;
  #generation = 0;
  /** Resolves once stored agents and `!cmd` keys are in; never rejects. */
  readonly loaded: Promise<void>;

  constructor(options: AgentRegistryOptions) {
    this.#options = options;
    if (options.token !== undefined) this.#operator = digestOf(options.token);
    for (const [name, entry] of Object.entries(options.config)) {
      const { key, ...settings } = entry;
      this.#config.set(name, { settings, keyInConfig: key !== undefined });
    }
    this.loaded = this.#load().then(
      () => void (this.#loaded = true),
      (err: unknown) => {
        this.#loaded = true;
        options.logger.error({ err: errorMessage(err) }, 'loading agents failed');
      },
    );
  }

  get isLoaded(): boolean {
    return this.#loaded;
  }

  /** Whether requests need a key: a `token` is configured or some agent exists. */
  get keysRequired(): boolean {
    return this.#operator !== undefined;
  }

  /** The file the operator key is kept in once agents exist; none with a `token`, or without a file store. */
  get operatorKeyFile(): string | undefined {
    return this.#options.token === undefined ? this.#options.operatorKeyPath : undefined;
  }

  /**
   * Changes (synchronously) with every change of who a key is — a key issued or revoked, an agent
   * added or re-read from the store, the operator key set — before any `await`: a verdict cached
   * under an older generation (the auth hook keeps one per connection) is stale the moment a key
   * is revoked, not once the store has it.
   */
  get generation(): number {
    return this.#generation;
  }

  /** Who `presented` is. Comparisons go through fixed-size digests, never the clear value. */
  authenticate(presented: string): KeyVerdict {
    const digest = digestOf(presented);
    if (this.#operator !== undefined && timingSafeEqual(digest, this.#operator)) return { kind: 'operator' };
    const parsed = parseAgentKey(presented);
    const record = parsed ? this.#keys.get(parsed.id) : undefined;
    if (parsed && record && secretMatches(parsed.secret, record.salt, record.hash)) {
      if (record.revokedAt !== undefined) return { kind: 'revoked' };
      return this.#verdictFor(record.agent);
    }
    const name = this.#configKeys.get(digest.toString('hex'));
    return name === undefined ? { kind: 'unknown' } : this.#verdictFor(name);
  }

  /** The agent of this name with its full settings; undefined when unknown or revoked. */
  get(name: string): Agent | undefined {
    const config = this.#config.get(name);
    if (config) return { name, source: 'config', settings: config.settings };
    const stored = this.#stored.get(name);
    if (!stored || stored.revokedAt !== undefined) return undefined;
    return { name, source: 'cli', settings: stored.settings as AgentSettings };
  }

  /** Whether agent `name` may still act: known, not revoked, not expired (a long-lived feed checks it per event). */
  isActive(name: string): boolean {
    const agent = this.get(name);
    return agent !== undefined && !isExpired(agent.settings, this.#options.clock.now());
  }

  list(): AgentInfo[] {
    const names = new Set([...this.#config.keys(), ...this.#stored.keys()]);
    return [...names].sort().map((name) => this.info(name) as AgentInfo);
  }

  info(name: string): AgentInfo | undefined {
    const config = this.#config.get(name);
    const stored = config ? undefined : this.#stored.get(name);
    if (!config && !stored) return undefined;
    const settings = (config?.settings ?? stored?.settings) as AgentSettings;
    const keyInConfig = config?.keyInConfig ?? false;
    return {
      name,
      source: config ? 'config' : 'cli',
      status: this.#statusOf(name, settings, keyInConfig, stored),
      keyInConfig,
      ...settings,
      ...(stored ? { createdAt: new Date(stored.createdAt).toISOString() } : {}),
      ...(stored?.revokedAt !== undefined ? { revokedAt: new Date(stored.revokedAt).toISOString() } : {}),
    };
  }

  /** Creates an agent and its first key; the key is in the answer and nowhere else. */
  async add(name: string, settings: AgentSettings): Promise<{ agent: AgentInfo; key: string }> {
    await this.loaded;
    if (this.#config.has(name)) {
      throw new SwitchboardError('AGENT_EXISTS', `Agent "${name}" is defined in the config file; "switchboard agents rotate ${name}" issues its key`);
    }
    const previous = this.#stored.get(name);
    if (previous && previous.revokedAt === undefined) throw new SwitchboardError('AGENT_EXISTS', `Agent "${name}" already exists`);
    const agent: StoredAgent = { name, settings: { ...settings }, createdAt: this.#options.clock.now() };
    // Keys an earlier agent of this name still holds (a config agent since removed, a stored one
    // that could not be read) must not come back to life with the new agent's rights.
    await this.#revokeKeys(name);
    this.#stored.set(name, agent);
    this.#generation++;
    await this.#options.store.putAgent(agent);
    const key = await this.#issue(name);
    this.#changed(name, 'added');
    return { agent: this.info(name) as AgentInfo, key };
  }

  /** A new key for the agent; every earlier key stops working at once. */
  async rotate(name: string): Promise<{ agent: AgentInfo; key: string }> {
    await this.loaded;
    this.#changeableKeys(name);
    await this.#revokeKeys(name);
    const key = await this.#issue(name);
    this.#changed(name, 'rotated');
    return { agent: this.info(name) as AgentInfo, key };
  }

  /** Revokes the agent's keys (and a stored agent itself); they answer `KEY_REVOKED` from now on. */
  async revoke(name: string): Promise<AgentInfo> {
    await this.loaded;
    const stored = this.#changeableKeys(name);
    const now = this.#options.clock.now();
    if (stored && stored.revokedAt === undefined) {
      stored.revokedAt = now;
      for (const key of this.#keys.values()) if (key.agent === name) key.revokedAt ??= now;
      this.#generation++;
      await this.#options.store.revokeAgent(name, now);
    } else {
      await this.#revokeKeys(name);
    }
    this.#changed(name, 'revoked');
    return this.info(name) as AgentInfo;
  }

  #changed(agent: string, change: AgentChange): void {
    this.#options.publish?.({ type: 'agent.changed', agent, change });
  }

  /** The stored agent whose keys may change (undefined for a config agent); throws otherwise. */
  #changeableKeys(name: string): StoredAgent | undefined {
    const config = this.#config.get(name);
    if (config?.keyInConfig) {
      throw new SwitchboardError('AGENT_IN_CONFIG', `The key of agent "${name}" comes from the config file; change it there`);
    }
    const stored = this.#stored.get(name);
    if (!config && !stored) throw new SwitchboardError('AGENT_NOT_FOUND', `No agent named "${name}"`);
    return stored;
  }

  async #issue(name: string): Promise<string> {
    const minted = mintAgentKey();
    const record: StoredAgentKey = { id: minted.id, agent: name, salt: minted.salt, hash: minted.hash, createdAt: this.#options.clock.now() };
    this.#keys.set(record.id, record);
    this.#generation++;
    await this.#options.store.putKey(record);
    this.#ensureOperator();
    return minted.key;
  }

  async #revokeKeys(name: string): Promise<void> {
    const now = this.#options.clock.now();
    for (const key of this.#keys.values()) if (key.agent === name) key.revokedAt ??= now;
    this.#generation++;
    await this.#options.store.revokeKeys(name, now);
  }

  #verdictFor(name: string): KeyVerdict {
    const agent = this.get(name);
    if (!agent) return { kind: 'revoked' };
    return isExpired(agent.settings, this.#options.clock.now()) ? { kind: 'expired' } : { kind: 'agent', agent };
  }

  #statusOf(name: string, settings: AgentSettings, keyInConfig: boolean, stored: StoredAgent | undefined): AgentStatus {
    if (stored?.revokedAt !== undefined) return 'revoked';
    if (isExpired(settings, this.#options.clock.now())) return 'expired';
    if (keyInConfig && [...this.#configKeys.values()].includes(name)) return 'active';
    const keys = [...this.#keys.values()].filter((key) => key.agent === name);
    if (keys.some((key) => key.revokedAt === undefined)) return 'active';
    return keys.length > 0 ? 'revoked' : 'no-key';
  }

  /**
   * Re-reads agents and keys from the store: another replica created, rotated or revoked one
   * (issue #28). Merged in, never removing: neither is ever deleted (a revocation is an update),
   * and a read that failed (an empty answer) must not lock every agent out. Announces nothing.
   */
  async refresh(): Promise<void> {
    await this.loaded;
    await this.#loadStored();
    this.#ensureOperator();
  }

  async #load(): Promise<void> {
    await this.#loadStored();
    await Promise.all(Object.entries(this.#options.config).map(([name, entry]) => this.#loadConfigKey(name, entry.key)));
    this.#ensureOperator();
  }

  async #loadStored(): Promise<void> {
    const { store, logger } = this.#options;
    const [agents, keys] = await Promise.all([store.agents(), store.keys()]);
    for (const key of keys) this.#keys.set(key.id, key);
    for (const agent of agents) {
      const parsed = AgentSettingsSchema.safeParse(agent.settings);
      if (!parsed.success) {
        logger.warn({ agent: agent.name }, `stored agent "${agent.name}" has settings this version cannot read; ignored`);
        continue;
      }
      if (this.#config.has(agent.name) && agent.revokedAt === undefined) {
        // Both would claim the same name; the agent already holding a key keeps it.
        this.#config.delete(agent.name);
        logger.error(
          { agent: agent.name },
          `agents.${agent.name}: an agent named "${agent.name}" was also created with "switchboard agents add"; the config entry is ignored (rename it, or revoke the other with "switchboard agents revoke ${agent.name}")`,
        );
      }
      this.#stored.set(agent.name, { ...agent, settings: parsed.data });
    }
    this.#generation++;
  }

  async #loadConfigKey(name: string, key: string | undefined): Promise<void> {
    if (key === undefined || !this.#config.has(name)) return;
    let value = key;
    if (key.startsWith('!')) {
      const result = await runShellCommand(key.slice(1).trim(), { timeoutMs: this.#options.commandTimeoutMs ?? 10_000 });
      if (!result.ok) {
        this.#options.logger.error({ agent: name }, `agents.${name}.key: command ${result.reason}; the agent has no key until a reload`);
        return;
      }
      value = result.stdout;
    }
    const hex = digestOf(value).toString('hex');
    const other = this.#configKeys.get(hex);
    if (other !== undefined) {
      this.#options.logger.error({ agent: name }, `agents.${name}.key: the same key as agent "${other}"; it stays ${other}'s`);
      return;
    }
    this.#configKeys.set(hex, name);
    this.#generation++;
  }

  /** Once an agent exists, requests need keys: the operator then needs one too. */
  #ensureOperator(): void {
    if (this.#operator !== undefined) return;
    this.#generation++;
    const path = this.#options.operatorKeyPath;
    // An operator key file means agents existed on an earlier run: if their records could not be
    // read this time (a read-only or damaged database), keys stay required — fail closed.
    const hadAgents = path !== undefined && operatorKeyExists(path);
    if (this.#config.size === 0 && this.#stored.size === 0 && !hadAgents && this.#options.tokenAgents !== true) return;
    const shared = this.#options.sharedOperatorKey;
    if (shared !== undefined) {
      this.#operator = digestOf(shared);
      if (path !== undefined) keepOperatorKey(path, shared, this.#options.logger);
      return;
    }
    try {
      if (path === undefined) throw new Error('the database is in memory');
      this.#operator = digestOf(loadOrCreateOperatorKey(path));
      this.#options.logger.info({ path }, 'agents need keys now: the operator key is in this file (the CLI on this machine reads it)');
    } catch (err) {
      // Keys are required all the same; the operator key is then one nobody holds.
      this.#operator = digestOf(mintOperatorKey());
      this.#options.logger.error({ err: errorMessage(err) }, 'agents exist but no token is configured, and no operator key file could be kept: set "token"');
    }
  }
}
