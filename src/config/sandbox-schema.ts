import { isAbsolute } from 'node:path';
import { z } from 'zod';

/**
 * The opt-in sandbox of a stdio server (issue #42, SPEC §23): `true` for the strict defaults, or
 * the object form. Enforced on Linux with bubblewrap (src/upstream/process/sandbox-plan.ts).
 */

const AbsolutePath = z.string().refine((path) => isAbsolute(path), {
  error: 'a sandbox path is absolute (${userHome}/… names a folder in your home)',
});

export const SandboxObjectSchema = z
  .object({
    /** Paths readable besides the read-only root (inside the hidden $HOME, say). @default [] */
    allowRead: z.array(AbsolutePath).optional(),
    /** Paths writable besides the server's `cwd` and its private /tmp. @default [] */
    allowWrite: z.array(AbsolutePath).optional(),
    /** `none`: a network namespace of its own (only its own loopback); `host`: the daemon's network. @default "host" */
    network: z.enum(['none', 'host']).optional(),
    /**
     * `configured`: the entry's `env` plus PATH, HOME, USER, LOGNAME, LANG; `inherit`: what an
     * unsandboxed server gets. @default "configured"
     */
    env: z.enum(['configured', 'inherit']).optional(),
    /** Data-segment limit of each of its processes (RLIMIT_DATA, through prlimit), in MiB. @default none */
    memoryMiB: z.number().int().min(16).max(1_048_576).optional(),
    /** Processes its user may run inside the sandbox (RLIMIT_NPROC, through prlimit). @default none */
    pids: z.number().int().min(1).max(1_000_000).optional(),
  })
  .strict();

export const SandboxSettingsSchema = z.union([z.boolean(), SandboxObjectSchema]);

/** `sandbox` of a server entry, or the daemon-wide default. */
export type SandboxSettings = z.infer<typeof SandboxSettingsSchema>;
export type SandboxObject = z.infer<typeof SandboxObjectSchema>;
