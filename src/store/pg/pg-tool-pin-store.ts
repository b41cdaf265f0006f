import type { ToolPin, ToolPinStore } from '../ports.js';
import { pinsOf, type PinRow } from '../store-rows.js';
import { MemoryToolPinStore } from '../tool-pin-store.js';
import { WriteOrder, type PgBackend } from './pg-backend.js';

/**
 * Tool pins in PostgreSQL (`tool_pin`): a pin approved on one replica holds on all. A batch is
 * one transaction. Pins this process could not write are kept in memory for the run and win
 * over the database, as in the SQLite store; while the database is away, the pins last read
 * answer for it.
 */
export class PgToolPinStore implements ToolPinStore {
  readonly #pg: PgBackend;
  readonly #order = new WriteOrder();
  readonly #memory = new MemoryToolPinStore();
  /** The rows last read per server: what a read answers while the database is away. */
  readonly #known = new Map<string, PinRow[]>();

  constructor(backend: PgBackend) {
    this.#pg = backend;
  }

  pinsOf(server: string): Promise<ToolPin[]> {
    return this.#order.read(async () => {
      const byTool = new Map<string, ToolPin>();
      // A changed tool must stay held during an outage: the last pins read stand in for the table.
      const rows = await this.#pg.recall(
        this.#known,
        server,
        'tool pin read',
        { server },
        [] as PinRow[],
        async () => (await this.#pg.query<PinRow>('SELECT tool, hash, definition_json, pinned_at FROM tool_pin WHERE server = $1', [server])).rows,
      );
      for (const pin of rows.flatMap(pinsOf)) byTool.set(pin.tool, pin);
      for (const pin of await this.#memory.pinsOf(server)) byTool.set(pin.tool, pin);
      return [...byTool.values()];
    });
  }

  put(server: string, pins: readonly ToolPin[]): Promise<void> {
    if (pins.length === 0) return Promise.resolve();
    const rows = pins.map((pin) => [server, pin.tool, pin.hash, JSON.stringify(pin.definition), pin.pinnedAt]);
    return this.#order.write(async () => {
      const kept = await this.#pg.write('tool pin write', { server }, () =>
        this.#pg.transaction(async (client) => {
          for (const row of rows) {
            await client.query(
              `INSERT INTO tool_pin (server, tool, hash, definition_json, pinned_at) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (server, tool) DO UPDATE SET
                 hash = excluded.hash, definition_json = excluded.definition_json, pinned_at = excluded.pinned_at`,
              row,
            );
          }
        }),
      );
      if (!kept) await this.#memory.put(server, pins);
    });
  }
}
