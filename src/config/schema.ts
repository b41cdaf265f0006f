import { ScriptsConfigSchema } from './scripts-schema.js';
import { z } from 'zod';
import { DEFAULT_ANSWER_BYTES, SearchConfigSchema } from './search-schema.js';
import { TelemetryConfigSchema } from './telemetry-schema.js';
import { MAX_TIMER_MS } from '../util/abort.js';
import { AgentAuthSchema } from './agent-auth-schema.js';
import { AgentConfigSchema } from './agent-schema.js';
import { ApprovalSettingsShape } from './approval-schema.js';
import { SandboxSettingsSchema } from './sandbox-schema.js';
import { PoliciesSchema } from './policy-schema.js';
import { NameGlob } from './name-glob.js';
import { MaxConcurrentCallsSchema, MaxResultTokensSchema, PinToolsSchema, QueueSizeSchema, ServerConfigSchema } from './server-schema.js';

export { CLIENT_ASSERTION_ALGS, OAuthSettingsSchema } from './oauth-schema.js';

/**
 * Schemas for Switchboard's own config file. The types are derived from them; the loose
 * `DiscoveredServerConfig` shape that other tools' files produce is validated separately by
 * `validateServerConfig` (SPEC §3) because those files are not ours to reject wholesale.
 */

/** The whole results behind cut ones, and caps per tool (issue #38). */
export const ResultsConfigSchema = z
  .object({
    /** Caps of tools whose exposed names match a glob (first match wins over the server's and the daemon's). @default {} */
    tools: z.record(NameGlob, MaxResultTokensSchema).default({}),
    /** Kept results held in memory up to this many bytes; older ones spill to files beside the store. @default 67108864 (64 MiB) */
    memoryBytes: z
      .number()
      .int()
      .nonnegative()
      .default(64 * 1024 * 1024),
    /** Spilled results kept up to this many bytes; the oldest are evicted beyond it. @default 1073741824 (1 GiB) */
    diskBytes: z
      .number()
      .int()
      .nonnegative()
      .default(1024 * 1024 * 1024),
    /** How long a result is kept, in ms. @default 900000 (15 min) */
    ttlMs: z
      .number()
      .int()
      .positive()
      .max(MAX_TIMER_MS)
      .default(15 * 60_000),
  })
  .strict();

/**
 * Health pings and reconnects (SPEC §6). `true`/`false` switches them on or off with the defaults;
 * the object form tunes them for every server (a server's own `pingIntervalMs`/`pingTimeoutMs` win).
 */
export const HealthConfigSchema = z.union([
  z.boolean(),
  z
    .object({
      /** @default true */
      enabled: z.boolean().default(true),
      /** @default 30000 */
      pingIntervalMs: z.number().int().nonnegative().max(MAX_TIMER_MS).default(30_000),
      /** @default 10000 */
      pingTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(10_000),
    })
    .strict(),
]);

/** The audit log (issue #22 item 4): what is kept, and for how long. */
export const AuditConfigSchema = z
  .object({
    /**
     * Record every call, prompt get and resource read. Off, only approval decisions are recorded,
     * and a call costs nothing more (the log costs about 10 % of the daemon's CPU per call). @default true
     */
    enabled: z.boolean().default(true),
    /** Keep argument values, with configured secret values masked. @default false */
    arguments: z.boolean().default(false),
    /** Entries older than this many days are deleted. @default 30 */
    days: z.number().int().positive().max(36_500).default(30),
    /** At most this many entries are kept (the newest). @default 100000 */
    maxRows: z.number().int().positive().max(100_000_000).default(100_000),
  })
  .strict();

export const DaemonConfigSchema = z
  .object({
    $schema: z.string().optional(),
    /** @default "127.0.0.1" */
    host: z.string().min(1).default('127.0.0.1'),
    /** @default 7337 */
    port: z.number().int().min(0).max(65535).default(7337),
    /**
     * Extra names the daemon answers to in `Host` (SPEC §9): `host` (any port) or `host:port`.
     * Loopback names with the daemon's port are always accepted. @default []
     */
    allowedHosts: z.array(z.string().min(1)).default([]),
    /** Extra browser origins allowed to call the daemon (`https://dash.example.com`). @default [] */
    allowedOrigins: z.array(z.string().min(1)).default([]),
    /**
     * Where browsers reach the daemon (a balancer, issue #43): OAuth comes back to
     * `<publicUrl>/oauth/callback`, its host is accepted. @default the listening address
     */
    publicUrl: z
      .url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' })
      .refine((url) => !/[?#]/.test(url), 'expected a URL without a query or fragment')
      .optional(),
    /** Bearer token; when set every route but /health needs it. */
    token: z.string().min(1).optional(),
    /** SQLite file for the tool cache. @default "<state dir>/switchboard.db" */
    dbPath: z.string().min(1).optional(),
    /**
     * Where everything persistent lives (issue #28): a `postgres://user:password@host:port/db` URL
     * puts it in PostgreSQL, shared by every replica on that database. `SWITCHBOARD_DATABASE_URL`
     * overrides it. @default the embedded SQLite file at `dbPath`
     */
    store: z
      .string()
      .regex(/^postgres(ql)?:\/\/\S+$/i, 'expected a postgres:// or postgresql:// URL (leave it out for the embedded SQLite file)')
      .optional(),
    /** How long startup waits before serving deferred tools. @default 250 */
    startupGateMs: z.number().int().nonnegative().default(250),
    /** How long SIGTERM waits for in-flight calls. @default 10000 */
    shutdownGraceMs: z.number().int().nonnegative().default(10_000),
    /** @default true */
    enableProjectConfig: z.boolean().default(true),
    /** Run `!cmd` values from project-level files. @default false */
    trustProjectCommands: z.boolean().default(false),
    disabledServers: z.array(z.string()).default([]),
    enabledServers: z.array(z.string()).default([]),
    /** Extra variables of the daemon's environment passed to stdio servers. @default [] */
    inheritEnv: z.array(z.string()).default([]),
    /** The sandbox of stdio servers whose entry does not say (issue #42); a restart applies a change. @default none */
    sandbox: SandboxSettingsSchema.optional(),
    /** @default "info" */
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Log one line per HTTP request. @default false */
    requestLogging: z.boolean().default(false),
    /**
     * Protocol era of upstreams that do not say (SPEC §4): `auto` probes once per config (the
     * verdict is cached), `legacy` talks only 2025 revisions, `modern` only 2026-07-28. @default "auto"
     */
    protocol: z.enum(['auto', 'legacy', 'modern']).default('auto'),
    /** Health pings and reconnects (SPEC §6). @default true */
    health: HealthConfigSchema.default(true),
    /** Watch the config files and apply edits live (SPEC §8). @default true */
    watch: z.boolean().default(true),
    /** `approvalTimeoutMs`, `approvalPrompt`, `approvalUrl` (approval-schema.ts). */
    ...ApprovalSettingsShape,
    /** Tool pinning of servers whose config does not say (issue #22). @default "changes" */
    pinTools: PinToolsSchema.default('changes'),
    /**
     * Pins the requests (tool calls, prompt gets, reads, completions) running on one server at
     * once, for servers that do not say (issue #26). @default unset: each server's limit adapts to
     * its latency, from 16 within 1–1000 (issue #35)
     */
    maxConcurrentCalls: MaxConcurrentCallsSchema.optional(),
    /**
     * Pins how many requests may wait for a slot on one server, for servers that do not say;
     * beyond it `SERVER_BUSY`. @default unset: a request waits while it can make its deadline, at
     * most 10 000 (issue #35)
     */
    queueSize: QueueSizeSchema.optional(),
    /** The audit log of calls, prompt gets and resource reads (issue #22 item 4). */
    audit: AuditConfigSchema.default({ enabled: true, arguments: false, days: 30, maxRows: 100_000 }),
    /**
     * How `/mcp` presents the tool catalogue (SPEC §13): `full` lists every tool, `search` lists
     * `search_tools`, `describe_tools`, `call_tool` and the `pinned` tools, `auto` is `full` up to
     * `searchAbove` tools in the caller's view and `search` above. An agent's own `catalogue` wins. @default "auto"
     */
    catalogue: z.enum(['full', 'search', 'auto']).default('auto'),
    /** `auto` switches to `search` above this many tools in the caller's view. @default 40 */
    searchAbove: z.number().int().nonnegative().default(40),
    /** Tools listed beside the meta-tools in `search` mode, as globs over exposed names. @default [] */
    pinned: z.array(NameGlob).default([]),
    /**
     * A tool result over this many tokens reaches the agent cut to it, with a note and a handle to
     * read the rest (`read_result`, `GET /results/:handle`; SPEC §19). Counted as UTF-8 bytes ÷ 3.
     * An agent's, a tool glob's (`results.tools`) or a server's own wins. 0 = off. @default 25000
     */
    maxResultTokens: MaxResultTokensSchema.default(25_000),
    /** Where whole results are kept and for how long, and caps per tool glob (issue #38). */
    results: ResultsConfigSchema.default({ tools: {}, memoryBytes: 64 * 1024 * 1024, diskBytes: 1024 * 1024 * 1024, ttlMs: 15 * 60_000 }),
    /** Tool search (issue #37); see search-schema.ts. @default { answerBytes: 12288, recordQueries: false } */
    search: SearchConfigSchema.default({ answerBytes: DEFAULT_ANSWER_BYTES, recordQueries: false }),
    /**
     * Code mode (issue #39): `run_script` on `/mcp` and `POST /scripts/run` for every caller; an
     * agent's own `codeMode` wins. @default false
     */
    codeMode: z.boolean({ error: 'codeMode must be true or false' }).default(false),
    /**
     * Code mode's admission and each run's sandbox limits. @default 16 runs, 4 per agent, 64 MiB,
     * 30 s, 100 calls, 8 at once, 100000 characters
     */
    scripts: ScriptsConfigSchema.optional(),
    mcpServers: z.record(z.string(), ServerConfigSchema).default({}),
    /** Agents, each with its own key and view (issue #22); see agent-schema.ts. @default {} */
    agents: z.record(z.string(), AgentConfigSchema).default({}),
    /** Agents signed in by their identity provider's JWT (issue #40 item 4); see agent-auth-schema.ts. @default none */
    agentAuth: AgentAuthSchema.optional(),
    /** OpenTelemetry export (issue #26); see telemetry-schema.ts. @default the OTEL_* variables */
    telemetry: TelemetryConfigSchema.optional(),
    /** Argument policies in CEL (issue #40), first match wins; see policy-schema.ts. @default [] */
    policies: PoliciesSchema.default([]),
  })
  .strict();

export type DaemonConfigInput = z.input<typeof DaemonConfigSchema>;
export type DaemonConfig = Readonly<z.infer<typeof DaemonConfigSchema>>;

/** Top-level keys we used to accept, with what replaces them (rejected with that hint). */
export const RETIRED_KEYS: Readonly<Record<string, string>> = {
  listen: 'host and port',
  // One list answered to every server replaced a server's own folder with it (issue #36 item 1):
  // roots belong to the server entry that needs them.
  roots: 'mcpServers.<name>.roots',
};

/**
 * The daemon file with its server entries left unchecked, so each entry can be validated on its
 * own: discovery reports one bad entry as invalid instead of discarding the whole file.
 */
export const DaemonSettingsSchema = DaemonConfigSchema.extend({
  mcpServers: z.record(z.string(), z.unknown()).default({}),
  // Checked entry by entry too: a bad agent is left out with a message, the rest applies.
  agents: z.record(z.string(), z.unknown()).default({}),
});
export type DaemonSettings = z.infer<typeof DaemonSettingsSchema>;
