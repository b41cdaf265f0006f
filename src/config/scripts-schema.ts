import { z } from 'zod';

/** `scripts`: code mode's admission and each run's sandbox limits (issue #39); `codeMode` turns it on. */
export const ScriptsConfigSchema = z
  .object({
    /** Scripts running at once in the daemon; beyond, `SERVER_BUSY`. @default 16 */
    maxRuns: z.number().int().positive().max(1000).optional(),
    /** Scripts of one agent running at once; beyond, `SERVER_BUSY`. @default 4 */
    maxRunsPerAgent: z.number().int().positive().max(1000).optional(),
    /** The QuickJS heap of a run, MiB. @default 64 */
    memoryMb: z.number().int().min(1).max(4096).optional(),
    /** A run's wall time, inner calls included, ms. @default 30000 */
    timeoutMs: z.number().int().min(10).max(3_600_000).optional(),
    /** Tool calls and searches of one run. @default 100 */
    maxCalls: z.number().int().positive().max(100_000).optional(),
    /** A run's calls in flight at once; the rest wait. @default 8 */
    concurrency: z.number().int().positive().max(256).optional(),
    /** Characters of console output kept, and of the value's JSON. @default 100000 */
    maxOutputChars: z.number().int().positive().max(100_000_000).optional(),
  })
  .strict();
