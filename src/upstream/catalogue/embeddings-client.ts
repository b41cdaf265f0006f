/**
 * A client of an OpenAI-compatible `POST <url>/embeddings` (issue #37 item 3): texts in, one
 * vector per text out, each scaled to unit length (so a dot product is the cosine). Every request
 * takes a signal; the caller's deadline cancels it.
 */
export interface EmbedderSettings {
  url: string;
  model: string;
  headers?: Record<string, string> | undefined;
  dimensions?: number | undefined;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

export type Embedder = (texts: readonly string[], signal: AbortSignal) => Promise<Float32Array[]>;

export function createEmbedder(settings: EmbedderSettings): Embedder {
  const endpoint = `${settings.url.replace(/\/+$/, '')}/embeddings`;
  const doFetch = settings.fetch ?? fetch;
  return async (texts, signal) => {
    const response = await doFetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...settings.headers },
      body: JSON.stringify({ model: settings.model, input: texts, ...(settings.dimensions !== undefined ? { dimensions: settings.dimensions } : {}) }),
      signal,
    });
    if (!response.ok) throw new Error(`embeddings endpoint answered ${response.status}`);
    const body = (await response.json()) as { data?: Array<{ embedding?: unknown; index?: unknown }> };
    const vectors: Float32Array[] = new Array<Float32Array>(texts.length);
    for (const [position, item] of (body.data ?? []).entries()) {
      const index = typeof item.index === 'number' ? item.index : position;
      if (!Array.isArray(item.embedding) || index < 0 || index >= texts.length) throw new Error('embeddings endpoint answered no vector list');
      vectors[index] = unit(Float32Array.from(item.embedding as number[]));
    }
    for (let i = 0; i < texts.length; i++)
      if (vectors[i] === undefined) throw new Error(`embeddings endpoint answered ${body.data?.length ?? 0} vectors for ${texts.length} texts`);
    return vectors;
  };
}

/** `vector` scaled to length 1 (a zero vector stays zero). */
export function unit(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) / norm;
  return vector;
}

/** The dot product of two unit vectors: their cosine (0 when their lengths differ). */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}
