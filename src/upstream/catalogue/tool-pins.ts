import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/client';
import { pino, type Logger } from 'pino';
import { errorMessage } from '../../errors.js';
import type { PublishEvent } from '../../events/daemon-events.js';
import type { ToolPin, ToolPinStore } from '../../store/ports.js';
import { MemoryToolPinStore } from '../../store/tool-pin-store.js';

/**
 * Tool pinning (issue #22): the definition each tool was served with is pinned by hash, per
 * server. A served tool whose definition changes afterwards is held — not listed, not callable —
 * until an operator approves the new definition. New tools and a server's first listing are
 * pinned and served at once. No I/O but the store's, in the background.
 */

/** `changes`: hold a changed tool until approved; `off`: serve every change (and pin it). */
export type PinMode = 'changes' | 'off';

/** What a pin covers: the parts of a tool that tell a model what it does. */
const PINNED_FIELDS = ['description', 'title', 'inputSchema', 'outputSchema', 'annotations'] as const;

/** One side of a held tool's change, as `GET /servers/:name` shows it. */
export interface DefinitionView {
  hash: string;
  description: string | null;
  title: string | null;
  annotations: Record<string, unknown> | null;
  /** sha256 of the schema's canonical JSON. */
  inputSchemaDigest: string | null;
  outputSchemaDigest: string | null;
}

/** A held tool as operators see it: which fields changed, and both sides. */
export interface HeldToolView {
  /** The server's own name (what `switchboard tools approve` takes). */
  name: string;
  /** The name it is served under once approved. */
  exposedName: string;
  changed: string[];
  /** When this definition was first held (ISO time). */
  heldAt: string;
  before: DefinitionView;
  after: DefinitionView;
}

/** A held tool: the tool as listed now (served on approval), its hash, and its view. */
export interface HeldTool {
  tool: Tool;
  hash: string;
  view: HeldToolView;
}

/** The parts of a tool a pin covers, absent fields left out. */
export function definitionOf(tool: Tool): Record<string, unknown> {
  const definition: Record<string, unknown> = {};
  for (const field of PINNED_FIELDS) if (tool[field] !== undefined) definition[field] = tool[field];
  return definition;
}

/** JSON with object keys sorted at every level: the same definition, the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function digest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

export interface SplitOptions {
  /** The server's own `pinTools`, over the daemon's. */
  mode: PinMode | undefined;
  exposedName: (tool: string) => string;
  /** What was held before, so a tool still held keeps its entry (and its `heldAt`). */
  previous: readonly HeldTool[];
  /**
   * Pin what is new. False for a list from the cache: a tool it has that no pin knows was never
   * judged by a live listing (a cache from before pinning), so the live list decides.
   */
  pinNew: boolean;
}

export interface ToolPinsOptions {
  /** @default pins kept in memory */
  store?: ToolPinStore;
  /** The daemon's `pinTools`. @default 'changes' */
  mode?: PinMode;
  /** @default silent */
  log?: Logger;
  /** Time of `pinnedAt` and `heldAt`. @default Date.now */
  now?: () => number;
  /** Where an operator's approval is announced (`pins.changed`): the event bus. @default nowhere */
  publish?: PublishEvent;
}

/**
 * The pins of every server, loaded from the store once per server (before its first listing:
 * the manager loads them while the server connects) and written back as they change. What an
 * operator approves is announced (`pins.changed`); the pins a listing adds are told by its
 * `tools.changed`, and each replica of a cluster pins its own listings itself.
 */
export class ToolPins {
  readonly #pins = new Map<string, Map<string, ToolPin>>();
  readonly #loading = new Map<string, Promise<void>>();
  /** Hashes of tool objects already seen: a re-list with the same definitions keeps its objects. */
  readonly #hashes = new WeakMap<Tool, string>();
  private readonly store: ToolPinStore;
  private readonly mode: PinMode;
  private readonly log: Logger;
  private readonly now: () => number;
  readonly #publish: PublishEvent | undefined;

  constructor(options: ToolPinsOptions = {}) {
    this.store = options.store ?? new MemoryToolPinStore();
    this.mode = options.mode ?? 'changes';
    this.log = options.log ?? pino({ level: 'silent' });
    this.now = options.now ?? Date.now;
    this.#publish = options.publish;
  }

  /** Reads the server's pins, once; never rejects (a failed read counts as none). */
  load(server: string): Promise<void> {
    let loading = this.#loading.get(server);
    if (!loading) {
      const loaded = (pins: readonly ToolPin[]): void => {
        if (!this.#pins.has(server)) this.#pins.set(server, new Map(pins.map((pin) => [pin.tool, pin])));
      };
      loading = this.store.pinsOf(server).then(loaded, (err: unknown) => {
        this.log.warn({ server, err: errorMessage(err) }, 'tool pin read failed');
        loaded([]);
      });
      this.#loading.set(server, loading);
    }
    return loading;
  }

  /**
   * Splits a server's listed tools into the ones served and the ones held, pinning what is new
   * (a tool never seen, every tool of a first listing, any change when pinning is off). Before
   * the server's pins are loaded nothing can be judged: everything is served, nothing pinned.
   */
  split(server: string, tools: Tool[], options: SplitOptions): { served: Tool[]; held: HeldTool[] } {
    const pins = this.#pins.get(server);
    if (!pins) {
      this.log.debug({ server }, 'tool pins not loaded yet; list served unpinned');
      return { served: tools, held: [] };
    }
    const mode = options.mode ?? this.mode;
    const fresh: ToolPin[] = [];
    const held: HeldTool[] = [];
    for (const tool of tools) {
      const hash = this.hashOf(tool);
      const pin = pins.get(tool.name);
      if (pin?.hash === hash) continue;
      if (pin === undefined || mode === 'off') {
        if (options.pinNew) fresh.push(this.pinOf(tool, hash));
      } else held.push(options.previous.find((h) => h.tool.name === tool.name && h.hash === hash) ?? this.heldOf(tool, hash, pin, options));
    }
    this.keep(server, pins, fresh);
    if (held.length === 0) return { served: tools, held };
    const names = new Set(held.map((h) => h.tool.name));
    return { served: tools.filter((tool) => !names.has(tool.name)), held };
  }

  /**
   * Pins the held tools' new definitions (the next split serves them) and announces it; `follows`
   * names the replica whose approval this applies (daemon-events.ts `Follows`).
   */
  approve(server: string, held: readonly HeldTool[], follows?: string): void {
    const pins = this.#pins.get(server);
    if (!pins || held.length === 0) return;
    this.keep(
      server,
      pins,
      held.map((h) => this.pinOf(h.tool, h.hash)),
    );
    const tools = held.map((h) => ({ name: h.tool.name, hash: h.hash }));
    this.#publish?.({ type: 'pins.changed', server, tools, ...(follows !== undefined ? { follows } : {}) });
  }

  private keep(server: string, pins: Map<string, ToolPin>, fresh: ToolPin[]): void {
    if (fresh.length === 0) return;
    for (const pin of fresh) pins.set(pin.tool, pin);
    // In the background: the store never rejects; this process goes on with what it keeps.
    void this.store.put(server, fresh);
  }

  private hashOf(tool: Tool): string {
    let hash = this.#hashes.get(tool);
    if (hash === undefined) this.#hashes.set(tool, (hash = digest(definitionOf(tool))));
    return hash;
  }

  private pinOf(tool: Tool, hash: string): ToolPin {
    return { tool: tool.name, hash, definition: definitionOf(tool), pinnedAt: this.now() };
  }

  private heldOf(tool: Tool, hash: string, pin: ToolPin, options: SplitOptions): HeldTool {
    const after = definitionOf(tool);
    const changed = PINNED_FIELDS.filter((field) => canonicalJson(pin.definition[field]) !== canonicalJson(after[field]));
    const view: HeldToolView = {
      name: tool.name,
      exposedName: options.exposedName(tool.name),
      changed,
      heldAt: new Date(this.now()).toISOString(),
      before: viewOf(pin.definition, pin.hash),
      after: viewOf(after, hash),
    };
    return { tool, hash, view };
  }
}

function viewOf(definition: Record<string, unknown>, hash: string): DefinitionView {
  const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
  const annotations = definition.annotations;
  return {
    hash,
    description: text(definition.description),
    title: text(definition.title),
    annotations: typeof annotations === 'object' && annotations !== null ? (annotations as Record<string, unknown>) : null,
    inputSchemaDigest: definition.inputSchema === undefined ? null : digest(definition.inputSchema),
    outputSchemaDigest: definition.outputSchema === undefined ? null : digest(definition.outputSchema),
  };
}
