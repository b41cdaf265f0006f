import type { Database, Statement } from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import type { StoreLogger } from './db.js';
import type { ToolPin, ToolPinStore } from './ports.js';
import { pinsOf, type PinRow } from './store-rows.js';

export type { ToolPin, ToolPinStore } from './ports.js';

/** Pins kept in this process only: the store when there is no usable database. */
export class MemoryToolPinStore implements ToolPinStore {
  private readonly servers = new Map<string, Map<string, ToolPin>>();

  async pinsOf(server: string): Promise<ToolPin[]> {
    return [...(this.servers.get(server)?.values() ?? [])];
  }

  async put(server: string, pins: readonly ToolPin[]): Promise<void> {
    let kept = this.servers.get(server);
    if (!kept) this.servers.set(server, (kept = new Map()));
    for (const pin of pins) kept.set(pin.tool, { ...pin });
  }
}

/**
 * The SQLite pin store, on the connection the tool cache owns (never closed here). A pin it
 * could not write is kept in memory for this run, so this process still holds what it saw.
 */
export class SqliteToolPinStore implements ToolPinStore {
  private readonly memory = new MemoryToolPinStore();
  private readonly selectPins: Statement<[string], PinRow>;
  private readonly upsertPin: Statement<[string, string, string, string, number]>;

  /** Throws if the `tool_pin` table is missing (a database of a version without it). */
  constructor(
    private readonly db: Database,
    private readonly options: { readOnly?: boolean; logger?: StoreLogger } = {},
  ) {
    this.selectPins = db.prepare('SELECT tool, hash, definition_json, pinned_at FROM tool_pin WHERE server = ?');
    this.upsertPin = db.prepare(`
      INSERT INTO tool_pin (server, tool, hash, definition_json, pinned_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (server, tool) DO UPDATE SET
        hash = excluded.hash, definition_json = excluded.definition_json, pinned_at = excluded.pinned_at
    `);
  }

  async pinsOf(server: string): Promise<ToolPin[]> {
    const byTool = new Map<string, ToolPin>();
    if (this.db.open) {
      try {
        for (const pin of this.selectPins.all(server).flatMap(pinsOf)) byTool.set(pin.tool, pin);
      } catch (err) {
        this.options.logger?.warn({ server, err: errorMessage(err) }, 'tool pin read failed');
      }
    }
    // What this run could not write wins over the file.
    for (const pin of await this.memory.pinsOf(server)) byTool.set(pin.tool, pin);
    return [...byTool.values()];
  }

  async put(server: string, pins: readonly ToolPin[]): Promise<void> {
    if (pins.length === 0) return;
    if (this.options.readOnly || !this.db.open) {
      await this.memory.put(server, pins);
      return;
    }
    try {
      this.db.transaction(() => {
        for (const pin of pins) this.upsertPin.run(server, pin.tool, pin.hash, JSON.stringify(pin.definition), pin.pinnedAt);
      })();
    } catch (err) {
      this.options.logger?.warn({ server, err: errorMessage(err) }, 'tool pin write failed');
      await this.memory.put(server, pins);
    }
  }
}
