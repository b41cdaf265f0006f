import { z } from 'zod';

/** The default byte budget of a `search_tools` answer (matches and neighbourhood map, as JSON). */
export const DEFAULT_ANSWER_BYTES = 12_288;

/**
 * An OpenAI-compatible embeddings endpoint (Ollama, TEI, vLLM, LiteLLM, OpenAI): tool search then
 * ranks by a hybrid of BM25 and cosine similarity (issue #37 item 3).
 */
export const EmbeddingsConfigSchema = z
  .object({
    /** The API base: vectors are asked of `<url>/embeddings` (OpenAI: `https://api.openai.com/v1`; Ollama: `http://localhost:11434/v1`). */
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
    /** The model named in each request; vectors are cached per model. */
    model: z.string().min(1),
    /** Sent with every request (`Authorization: Bearer …`); never logged or shown. */
    headers: z.record(z.string(), z.string()).optional(),
    /** Asked of models that can shorten their vectors (OpenAI's `dimensions`). @default the model's own */
    dimensions: z.number().int().positive().max(16_384).optional(),
    /** The cosine's share of the hybrid score, BM25 (scaled to the best match) the rest. @default 0.5 */
    weight: z.number().min(0).max(1).default(0.5),
    /** How long a search waits for its query's vector before it ranks by BM25 alone, in ms. @default 1000 */
    timeoutMs: z.number().int().positive().max(60_000).default(1_000),
  })
  .strict();

export type EmbeddingsConfig = z.infer<typeof EmbeddingsConfigSchema>;

/**
 * Tool search (issue #37): how big an answer may grow. A `search_tools` answer (and
 * `GET /tools/search`) holds the ranked matches with their schemas and, within this budget, a map
 * of the other likely tools by name.
 */
export const SearchConfigSchema = z
  .object({
    /** The most bytes of one answer's JSON (matches and map; the first match is always whole). @default 12288 */
    answerBytes: z.number().int().min(1_024, 'must be at least 1024').max(1_048_576, 'must be at most 1048576').default(DEFAULT_ANSWER_BYTES),
    /**
     * Keep the texts of the latest searches (and of those that found nothing) for
     * `GET /search/stats`, in memory only. Off, only counts are kept. @default false
     */
    recordQueries: z.boolean().default(false),
    /** Ranking by meaning too, with an operator's embeddings endpoint. @default none: BM25 alone */
    embeddings: EmbeddingsConfigSchema.optional(),
  })
  .strict();

export type SearchConfig = z.infer<typeof SearchConfigSchema>;
