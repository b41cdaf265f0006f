import { z } from 'zod';

/** The default byte budget of a `search_tools` answer (matches and neighbourhood map, as JSON). */
export const DEFAULT_ANSWER_BYTES = 12_288;

/**
 * Tool search (issue #37): how big an answer may grow. A `search_tools` answer (and
 * `GET /tools/search`) holds the ranked matches with their schemas and, within this budget, a map
 * of the other likely tools by name.
 */
export const SearchConfigSchema = z
  .object({
    /** The most bytes of one answer's JSON (matches and map; the first match is always whole). @default 12288 */
    answerBytes: z.number().int().min(1_024, 'must be at least 1024').max(1_048_576, 'must be at most 1048576').default(DEFAULT_ANSWER_BYTES),
  })
  .strict();

export type SearchConfig = z.infer<typeof SearchConfigSchema>;
