import { createHash } from 'node:crypto';
import type { StateStore } from '../../store/ports.js';
import { cosine, type Embedder } from './embeddings-client.js';
import type { BridgedTool } from './tool-bridge.js';
import type { ToolCatalogue } from './tool-catalogue.js';

/** What `/status` shows of the embeddings (issue #37 item 3). */
export interface VectorsHealth {
  model: string;
  /** Tools of the catalogue with a vector. */
  vectors: number;
  tools: number;
  /** Set while the endpoint fails: searches rank by BM25 alone (or without the tools it has not embedded). */
  warning?: string;
}

/** Texts per request to the endpoint. */
const BATCH = 32;
/** How long one batch of tool texts may take. */
const BATCH_TIMEOUT_MS = 30_000;
/** After a failed batch, how long before the background tries again. */
const RETRY_AFTER_MS = 30_000;
/** Query vectors kept (an agent repeats and rephrases). */
const QUERY_CACHE = 200;

/**
 * The catalogue's tool vectors (issue #37 item 3): computed in the background by `embedder`,
 * cached in the store under `search.vector:<sha256(model, text)>` — model × definition — so a
 * warm start asks the endpoint for nothing, and a changed model or definition for only what
 * changed. A failing endpoint never fails a search: it is noted (`health().warning`) and the
 * search ranks without it.
 */
export class ToolVectors {
  private readonly vectors = new Map<string, Float32Array>();
  private readonly keys = new WeakMap<BridgedTool, string>();
  private readonly queries = new Map<string, Float32Array>();
  private running: Promise<void> | undefined;
  private again = false;
  private failure: { message: string; at: number } | undefined;
  private readonly model: string;
  private readonly now: () => number;

  constructor(
    private readonly catalogue: ToolCatalogue,
    private readonly embedder: Embedder,
    private readonly store: Pick<StateStore, 'get' | 'set'>,
    options: { model: string; now?: () => number },
  ) {
    this.model = options.model;
    this.now = options.now ?? Date.now;
  }

  /** A tool's vector, if computed. */
  of(tool: BridgedTool): Float32Array | undefined {
    return this.vectors.get(this.keyOf(tool));
  }

  /** The cosine of `query` with `tool`, 0 without a vector. */
  similarity(query: Float32Array, tool: BridgedTool): number {
    const vector = this.of(tool);
    return vector ? cosine(query, vector) : 0;
  }

  /** The query's vector within `timeoutMs`; a failure is noted and rethrown. */
  async embedQuery(query: string, timeoutMs: number): Promise<Float32Array> {
    const known = this.queries.get(query);
    if (known) return known;
    try {
      const [vector] = await this.embedder([query], AbortSignal.timeout(timeoutMs));
      this.failure = undefined;
      if (this.queries.size >= QUERY_CACHE) this.queries.delete(this.queries.keys().next().value as string);
      this.queries.set(query, vector as Float32Array);
      return vector as Float32Array;
    } catch (err) {
      this.noteFailure(err);
      throw err;
    }
  }

  /**
   * Brings the vectors up to the catalogue in the background: the store first, the endpoint for
   * the rest, a batch at a time. One run at a time; a call during a run makes it go round again.
   */
  refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    if (this.failure && this.now() - this.failure.at < RETRY_AFTER_MS) return Promise.resolve();
    this.running = (async () => {
      do {
        this.again = false;
        await this.fill();
      } while (this.again && !this.failure);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  health(): VectorsHealth {
    const tools = this.catalogue.list();
    let vectors = 0;
    for (const tool of tools) if (this.vectors.has(this.keyOf(tool))) vectors++;
    return {
      model: this.model,
      vectors,
      tools: tools.length,
      ...(this.failure ? { warning: `The embeddings endpoint failed (${this.failure.message}); search ranks by BM25 alone until it answers again` } : {}),
    };
  }

  private async fill(): Promise<void> {
    const missing: Array<{ key: string; text: string }> = [];
    const wanted = new Set<string>();
    for (const tool of this.catalogue.list()) {
      const key = this.keyOf(tool);
      wanted.add(key);
      if (this.vectors.has(key)) continue;
      const stored = await this.store.get(key);
      if (stored !== undefined) this.vectors.set(key, decode(stored));
      else missing.push({ key, text: embeddingText(tool) });
    }
    // Vectors of definitions no longer listed are let go (the store keeps them for a return).
    for (const key of this.vectors.keys()) if (!wanted.has(key)) this.vectors.delete(key);
    for (let i = 0; i < missing.length; i += BATCH) {
      const batch = missing.slice(i, i + BATCH);
      let vectors: Float32Array[];
      try {
        vectors = await this.embedder(
          batch.map((item) => item.text),
          AbortSignal.timeout(BATCH_TIMEOUT_MS),
        );
      } catch (err) {
        this.noteFailure(err);
        return;
      }
      this.failure = undefined;
      for (const [j, item] of batch.entries()) {
        const vector = vectors[j] as Float32Array;
        this.vectors.set(item.key, vector);
        await this.store.set(item.key, encode(vector));
      }
    }
  }

  private keyOf(tool: BridgedTool): string {
    let key = this.keys.get(tool);
    if (key === undefined) {
      key = `search.vector:${createHash('sha256').update(this.model).update('\u0000').update(embeddingText(tool)).digest('base64url')}`;
      this.keys.set(tool, key);
    }
    return key;
  }

  private noteFailure(err: unknown): void {
    const message = err instanceof Error ? (err.name === 'TimeoutError' ? 'no answer in time' : err.message) : String(err);
    this.failure = { message, at: this.now() };
  }
}

/** What is embedded of a tool: its server, name, title and what it does. */
export function embeddingText(tool: BridgedTool): string {
  return [`${tool.server} ${tool.originalName}`, tool.title, tool.description.slice(0, 1_000)].filter(Boolean).join('\n');
}

function encode(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
}

function decode(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}
