import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { MAX_TIMER_MS } from '../util/abort.js';
import { NameGlob } from './name-glob.js';
import { OAuthSettingsSchema } from './oauth-schema.js';
import { SandboxSettingsSchema } from './sandbox-schema.js';
import { TaskSettingsSchema } from './tasks-schema.js';

/**
 * The schema of one server entry of Switchboard's own config file (its `servers` map), and the
 * per-server settings the daemon-wide ones default (SPEC §2–3).
 */

const StringRecord = z.record(z.string(), z.string());

/** `enabled` accepts a boolean or the strings "true"/"false"/"1"/"0" (SPEC §2). */
export const EnabledFlagSchema = z.union([z.boolean(), z.enum(['true', 'false', '1', '0'])]);

/** Tool pinning (issue #22): `changes` holds a served tool whose definition changed until approved. */
export const PinToolsSchema = z.enum(['changes', 'off']);

/** A whole number in a range, with one message that says so whatever is wrong with it. */
export function wholeNumber(field: string, min: number, max: number) {
  const error = `${field} must be a whole number from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}
/** Requests running on one upstream at once (issue #26). */
export const MaxConcurrentCallsSchema = wholeNumber('maxConcurrentCalls', 1, 10_000);
/** Requests waiting in line for one upstream (issue #26); 0 refuses at once when every slot is taken. */
export const QueueSizeSchema = wholeNumber('queueSize', 0, 100_000);

/**
 * A root a server is told about: an absolute path or a `file://` URI. A relative path would be
 * read against whatever directory the daemon was started in — exactly what must not decide which
 * folder a server may touch (issue #36 item 1).
 */
const RootSchema = z.string().refine((root) => root.startsWith('file://') || isAbsolute(root), {
  error: 'a root is an absolute path or a file:// URI (${userHome}/… names a folder in your home)',
});

/** A result's cap in tokens (issue #38); 0 turns the guard off. */
export const MaxResultTokensSchema = wholeNumber('maxResultTokens', 0, 10_000_000);

export const ServerConfigSchema = z
  .object({
    type: z.enum(['stdio', 'http', 'sse']).optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: StringRecord.optional(),
    cwd: z.string().optional(),
    url: z.url({ message: 'Invalid url' }).optional(),
    headers: StringRecord.optional(),
    enabled: EnabledFlagSchema.optional(),
    /** Connect + list deadline in ms; 0 disables. @default 30000 */
    timeout: z.number().int().nonnegative().max(MAX_TIMER_MS).optional(),
    /** Tool-call deadline in ms, reset by progress; 0 disables. @default 60000 */
    callTimeout: z.number().int().nonnegative().max(MAX_TIMER_MS).optional(),
    /** Time between health pings in ms; 0 disables them. @default health.pingIntervalMs */
    pingIntervalMs: z.number().int().nonnegative().max(MAX_TIMER_MS).optional(),
    /** Ping deadline in ms. @default health.pingTimeoutMs */
    pingTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).optional(),
    /** Prefix of the server's exposed tool and prompt names; "" = the original names. @default "mcp_<server>_" */
    toolPrefix: z.string().max(40).optional(),
    /** Protocol era to talk. @default the daemon's `protocol` */
    protocol: z.enum(['auto', 'legacy', 'modern']).optional(),
    /** A second, 2025-era connection for 2025-era agents' calls when an http server answers 2026-07-28 (issue #21). @default true */
    eraCompanion: z.boolean().optional(),
    /** Only these tools (original names) are exposed. @default every tool */
    includeTools: z.array(z.string()).optional(),
    /** These tools are hidden; wins over includeTools. @default none */
    excludeTools: z.array(z.string()).optional(),
    /** OAuth sign-in settings of an http/sse server (issue #16). */
    oauth: OAuthSettingsSchema.optional(),
    /** Calls to tools whose own names (as the server lists them) match one of these globs wait for an operator's approval. @default none */
    requireApproval: z.array(NameGlob).optional(),
    /** Tools the gateway runs as tasks for agents that negotiated `io.modelcontextprotocol/tasks` (issue #41). @default none */
    tasks: TaskSettingsSchema.optional(),
    /** How long such a call waits for a decision, in ms. @default the daemon's `approvalTimeoutMs` */
    approvalTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).optional(),
    /** Hold a served tool whose definition changed until approved (`changes`), or not (`off`). @default the daemon's `pinTools` */
    pinTools: PinToolsSchema.optional(),
    /**
     * Pins the requests running on this server at once (issue #26). @default the daemon's
     * `maxConcurrentCalls`, else adaptive (issue #35)
     */
    maxConcurrentCalls: MaxConcurrentCallsSchema.optional(),
    /**
     * Pins the requests waiting for a slot on this server; beyond it `SERVER_BUSY`. @default the
     * daemon's `queueSize`, else bounded by deadlines
     */
    queueSize: QueueSizeSchema.optional(),
    /**
     * The folders this server is told about (`roots/list`), and the bounds of an agent's roots
     * during its calls (issue #36 item 1). @default none: a server keeps the folders its own
     * command line names, and is told an agent's roots only during that agent's calls
     */
    roots: z.array(RootSchema).optional(),
    /** Run this stdio server in a bubblewrap sandbox (issue #42): `true` or the object form. @default the daemon's `sandbox`, else none */
    sandbox: SandboxSettingsSchema.optional(),
    /**
     * Results of this server's tools over this many tokens reach agents cut, with a handle (issue
     * #38); 0 = off. @default the daemon's `maxResultTokens`
     */
    maxResultTokens: MaxResultTokensSchema.optional(),
  })
  .strict();

export type ServerConfigInput = z.input<typeof ServerConfigSchema>;
export type NativeServerConfig = z.infer<typeof ServerConfigSchema>;

/** Server entry keys we used to accept, with what replaces them. */
export const RETIRED_SERVER_KEYS: Readonly<Record<string, string>> = {
  timeoutMs: 'timeout',
};
