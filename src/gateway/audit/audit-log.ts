import type { Logger } from 'pino';
import type { SecretValues } from '../../config/secret-values.js';
import type { CallFinishedEvent, PublishEvent } from '../../events/daemon-events.js';
import type { AuditEntry, AuditQuery, AuditStore, StoredAuditEntry } from '../../store/ports.js';
import type { Clock, ClockTimer } from '../../util/clock.js';

/** The `audit` settings of the config file. */
export interface AuditSettings {
  /** Calls, prompt gets and resource reads are recorded (the request runner is handed the log). @default true */
  enabled: boolean;
  /** Keep argument values (secrets masked). @default false */
  arguments: boolean;
  /** Entries older than this many days are deleted. @default 30 */
  days: number;
  /** At most this many entries are kept, the newest. @default 100000 */
  maxRows: number;
}

/** The most argument text an audit row keeps (argument sizes are always recorded whole). */
export const MAX_AUDITED_ARGUMENTS = 64 * 1024;

export const DEFAULT_AUDIT_SETTINGS: Readonly<AuditSettings> = { enabled: true, arguments: false, days: 30, maxRows: 100_000 };

/**
 * Queued entries are written together this long after the first of them, or as soon as this many
 * are queued: one transaction per batch keeps the call hot path free of disk writes.
 */
export const FLUSH_DELAY_MS = 50;
export const FLUSH_BATCH = 256;
/** How often retention runs, besides at start. @default 10 minutes */
export const TRIM_INTERVAL_MS = 10 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** What the request path knows about a finished request; the log sizes and masks the values. */
export interface AuditRecord extends Omit<CallFinishedEvent, 'type' | 'argBytes' | 'resultBytes'> {
  /** The request's arguments: sized, and kept (masked) with `audit.arguments: true`. */
  args?: unknown;
  /** The result when the request succeeded (or a tool answered `isError`): sized only. */
  result?: unknown;
}

export interface AuditLogOptions {
  store: AuditStore;
  publish: PublishEvent;
  clock: Clock;
  settings?: Partial<AuditSettings>;
  /** Masks known secret values in the argument JSON kept with `audit.arguments`. */
  secrets?: Pick<SecretValues, 'maskJson'>;
  logger?: Pick<Logger, 'debug'>;
}

/**
 * The audit log (issue #22 item 4): every tool call, prompt get and resource read, and what
 * else wants a record (approval decisions). `record` only queues and publishes `call.finished`;
 * the queue goes to the store in one write a moment later, on size, on `query` and on `close`.
 */
export class AuditLog {
  readonly #options: AuditLogOptions;
  readonly #settings: AuditSettings;
  #queue: AuditEntry[] = [];
  #flushTimer: ClockTimer | undefined;
  #trimTimer: ClockTimer | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: AuditLogOptions) {
    this.#options = options;
    this.#settings = { ...DEFAULT_AUDIT_SETTINGS, ...options.settings };
  }

  /** Trims now, then every `TRIM_INTERVAL_MS` until closed. */
  start(): Promise<number> {
    if (this.#closing) return Promise.resolve(0);
    this.#scheduleTrim();
    return this.trim();
  }

  /**
   * A finished request: queued for the store, and a `call.finished` event (sizes, never values).
   * The event and the row are built field by field from the record, one object each (issue #44:
   * this runs on every call, and the spreads and rest-destructurings it had copied the record four
   * times).
   */
  recordRequest(record: AuditRecord): void {
    // Microseconds are noise at this scale, and keep rows and events short.
    const durationMs = Math.round(record.durationMs * 1000) / 1000;
    const argsJson = record.args === undefined ? undefined : JSON.stringify(record.args);
    const argBytes = argsJson === undefined ? 0 : Buffer.byteLength(argsJson);
    const resultBytes = record.result === undefined ? 0 : Buffer.byteLength(JSON.stringify(record.result));
    const { agent, transport, server, kind, name, outcome, code, runId } = record;
    const event: CallFinishedEvent = { type: 'call.finished', transport, server, kind, name, outcome, durationMs, argBytes, resultBytes };
    const entry: AuditEntry = { ts: Math.round(this.#options.clock.now() - durationMs), transport, server, kind, name, outcome, durationMs, argBytes, resultBytes };
    if (agent !== undefined) event.agent = entry.agent = agent;
    if (code !== undefined) event.code = entry.code = code;
    if (runId !== undefined) event.runId = entry.runId = runId;
    if (this.#settings.arguments && argsJson !== undefined) entry.arguments = this.#mask(argsJson);
    this.record(entry);
    this.#options.publish(event);
  }

  /** An entry whose arguments the log sizes and, with `audit.arguments`, keeps masked (an approval decision, …). */
  recordWithArguments(entry: Omit<AuditEntry, 'argBytes' | 'arguments'>, args: unknown): void {
    const argsJson = JSON.stringify(args) ?? '';
    const masked = this.#settings.arguments ? this.#mask(argsJson) : undefined;
    this.record({ ...entry, argBytes: Buffer.byteLength(argsJson), ...(masked !== undefined ? { arguments: masked } : {}) });
  }

  /**
   * Arguments as an operator may see them outside the log (a pending approval, issue #40 item 3):
   * with `audit.arguments: true`, known secret values masked; else undefined, nothing shown.
   */
  shownArguments(args: Record<string, unknown>): Record<string, unknown> | undefined {
    if (!this.#settings.arguments) return undefined;
    const json = JSON.stringify(args);
    return this.#options.secrets ? (JSON.parse(this.#options.secrets.maskJson(json)) as Record<string, unknown>) : args;
  }

  /** Queues any entry. `arguments` must already be masked. */
  record(entry: AuditEntry): void {
    if (this.#closing) return;
    this.#queue.push(entry);
    if (this.#queue.length >= FLUSH_BATCH) void this.flush();
    else if (this.#flushTimer === undefined) this.#flushTimer = this.#options.clock.setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /** Newest first; what is queued is written first, so a request that just ended is there. */
  async query(query: AuditQuery): Promise<StoredAuditEntry[]> {
    await this.flush();
    return this.#options.store.query(query);
  }

  /** Writes the queue in one batch. */
  flush(): Promise<void> {
    this.#options.clock.clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    const batch = this.#queue;
    if (batch.length === 0) return Promise.resolve();
    this.#queue = [];
    return this.#options.store.append(batch);
  }

  /** Applies the retention (`days`, `maxRows`); resolves with how many entries went. */
  async trim(): Promise<number> {
    await this.flush();
    const { days, maxRows } = this.#settings;
    const removed = await this.#options.store.trim(this.#options.clock.now() - days * DAY_MS, maxRows);
    if (removed > 0) this.#options.logger?.debug({ removed }, 'audit log trimmed');
    return removed;
  }

  /** Stops the timers and writes what is queued. Idempotent and joinable. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#options.clock.clearTimeout(this.#trimTimer);
      await this.flush();
    })();
    return this.#closing;
  }

  #scheduleTrim(): void {
    this.#trimTimer = this.#options.clock.setTimeout(() => {
      if (this.#closing) return;
      this.#scheduleTrim();
      void this.trim();
    }, TRIM_INTERVAL_MS);
  }

  /** Masked, and cut at `MAX_AUDITED_ARGUMENTS` characters: retention counts rows, so a row's size must be bounded too. */
  #mask(json: string): string {
    const masked = this.#options.secrets ? this.#options.secrets.maskJson(json) : json;
    return masked.length <= MAX_AUDITED_ARGUMENTS ? masked : `${masked.slice(0, MAX_AUDITED_ARGUMENTS)}…[truncated]`;
  }
}
