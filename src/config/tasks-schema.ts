import { z } from 'zod';
import { NameGlob } from './name-glob.js';

/**
 * A server's `tasks` (issue #41): which of its tools the gateway runs as tasks — globs over its own
 * tool names — and whether a task is `optional` (an agent without the tasks extension gets a plain
 * call) or `required` (such an agent is refused, -32021).
 */
export const TaskSettingsSchema = z
  .object({
    /** Globs over the server's own tool names. */
    tools: z.array(NameGlob).min(1),
    /** @default optional */
    mode: z.enum(['optional', 'required']).optional(),
  })
  .strict();
