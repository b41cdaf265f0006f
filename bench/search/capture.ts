/**
 * Captures the tool-search corpus (bench/search/corpus.json): real tool definitions listed by real
 * MCP servers installed from npm.
 *
 *   node --import tsx bench/search/capture.ts [--dir /tmp/corpus-pkgs] [--only server,server]
 *
 * Each package below is installed at its pinned version into its own prefix under --dir (skipped
 * when already there, with lifecycle scripts off so no browser or binary download runs), started as
 * a stdio child with the arguments and dummy environment given here, asked for `tools/list` (every
 * page), and closed. Nothing is called; no token below is real. A server that does not start or
 * does not list within the timeout is reported and left out. The corpus keeps each tool as listed
 * (name, title, description, inputSchema, annotations) minus `outputSchema`, `_meta` and `icons`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

export interface Source {
  /** npm package name. */
  package: string;
  /** Exact version installed. */
  version: string;
  /** Short name used as the Switchboard server name. */
  server: string;
  /** Which bin of the package to run (default: the only/first one). */
  bin?: string;
  args?: string[];
  env?: Record<string, string>;
}

const SANDBOX = '/tmp/corpus-sandbox';

/** Dummy values for the tokens servers check for at start-up. None is a real credential. */
const DUMMY_ENV: Record<string, string> = {
  GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_dummy',
  GITLAB_PERSONAL_ACCESS_TOKEN: 'glpat-dummy',
  GITLAB_API_URL: 'https://gitlab.invalid/api/v4',
  SLACK_BOT_TOKEN: 'xoxb-dummy',
  SLACK_TEAM_ID: 'T00000000',
  BRAVE_API_KEY: 'dummy',
  GOOGLE_MAPS_API_KEY: 'dummy',
  FIRECRAWL_API_KEY: 'fc-dummy',
  EXA_API_KEY: 'dummy',
  TAVILY_API_KEY: 'tvly-dummy',
  HEROKU_API_KEY: 'dummy',
  PRIVATE_APP_ACCESS_TOKEN: 'dummy',
  HUBSPOT_ACCESS_TOKEN: 'dummy',
  CIRCLECI_TOKEN: 'dummy',
  DATADOG_API_KEY: 'dummy',
  DATADOG_APP_KEY: 'dummy',
  SHORTCUT_API_TOKEN: 'dummy',
  ATLASSIAN_SITE_NAME: 'dummy',
  ATLASSIAN_USER_EMAIL: 'dummy@example.invalid',
  ATLASSIAN_API_TOKEN: 'dummy',
  PERPLEXITY_API_KEY: 'pplx-dummy',
  FIGMA_API_KEY: 'dummy',
  BROWSERBASE_API_KEY: 'dummy',
  BROWSERBASE_PROJECT_ID: 'dummy',
  ES_URL: 'http://127.0.0.1:1',
  ES_API_KEY: 'dummy',
  NOTION_TOKEN: 'ntn_dummy',
  SENTRY_ACCESS_TOKEN: 'dummy',
  STRIPE_SECRET_KEY: 'sk_test_dummy',
  LAUNCHDARKLY_API_KEY: 'dummy',
  SUPABASE_ACCESS_TOKEN: 'sbp_dummy',
  AZURE_DEVOPS_ORG: 'dummy',
  DSN: 'sqlite:///:memory:',
  CONTEXT7_API_KEY: 'dummy',
  // Telemetry off where the server honours it (nothing but npm is reachable anyway).
  DO_NOT_TRACK: '1',
  MDB_MCP_TELEMETRY: 'disabled',
  AZURE_MCP_COLLECT_TELEMETRY: 'false',
};

/**
 * Tried and left out (they do not list offline with dummy credentials):
 *   @modelcontextprotocol/server-gitlab@2025.4.25: its inputSchemas fail the SDK client's validation (no "type": "object")
 *   @modelcontextprotocol/server-redis@2025.4.25: exits when it cannot reach Redis
 *   @modelcontextprotocol/server-gdrive@2025.1.14: exits without an OAuth credentials file
 *   @supabase/mcp-server-supabase@0.13.0: fetches from its API before listing
 *   @azure-devops/mcp@2.10.0: needs the keytar native build (install scripts are off)
 *   @heroku/mcp-server@1.2.8: the published package misses an SDK module at start-up
 *   @stripe/mcp@0.3.3: does not list within 60 s offline
 *   @cocal/google-calendar-mcp@2.6.3: exits without an OAuth credentials file
 *   @bytebase/dbhub@0.21.2: exits at start-up
 *   @railway/mcp-server@0.1.12: exits without the Railway CLI
 *   @cloudflare/mcp-server-cloudflare@0.2.0: needs a wrangler login
 *   @gongrzhe/server-gmail-autoauth-mcp@1.1.11: exits without an OAuth keys file
 *   @salesforce/mcp@0.30.15: crashes at start-up (TypeError in a provider) offline
 *   @apify/actors-mcp-server@0.10.6: fetches its Actor list from the Apify API before listing
 *   @mizchi/lsmcp@0.9.4: exits at start-up
 */
export const SOURCES: Source[] = [
  { package: '@modelcontextprotocol/server-filesystem', version: '2026.8.31', server: 'filesystem', args: [SANDBOX] },
  { package: '@modelcontextprotocol/server-memory', version: '2026.8.31', server: 'memory', env: { MEMORY_FILE_PATH: `${SANDBOX}/memory.jsonl` } },
  { package: '@modelcontextprotocol/server-everything', version: '2026.8.31', server: 'everything', args: ['stdio'] },
  { package: '@modelcontextprotocol/server-github', version: '2025.4.8', server: 'github' },
  { package: '@modelcontextprotocol/server-slack', version: '2025.4.25', server: 'slack' },
  { package: '@modelcontextprotocol/server-postgres', version: '0.6.2', server: 'postgres', args: ['postgresql://127.0.0.1:1/db'] },
  { package: '@modelcontextprotocol/server-puppeteer', version: '2025.5.12', server: 'puppeteer' },
  { package: '@modelcontextprotocol/server-brave-search', version: '0.6.2', server: 'brave-search' },
  { package: '@modelcontextprotocol/server-google-maps', version: '0.6.2', server: 'google-maps' },
  { package: '@modelcontextprotocol/server-sequential-thinking', version: '2026.8.31', server: 'sequential-thinking' },
  { package: '@notionhq/notion-mcp-server', version: '2.5.2', server: 'notion' },
  { package: '@playwright/mcp', version: '0.0.86', server: 'playwright', args: ['--caps=vision,pdf,testing,tracing'] },
  { package: 'chrome-devtools-mcp', version: '1.11.0', server: 'chrome-devtools' },
  { package: '@upstash/context7-mcp', version: '4.1.1', server: 'context7' },
  { package: 'firecrawl-mcp', version: '3.22.2', server: 'firecrawl' },
  { package: 'mcp-server-kubernetes', version: '4.1.7', server: 'kubernetes' },
  { package: '@azure/mcp', version: '2.0.5', server: 'azure', args: ['server', 'start', '--mode', 'all'] },
  { package: '@sentry/mcp-server', version: '0.36.0', server: 'sentry', args: ['--access-token=dummy'] },
  { package: 'exa-mcp-server', version: '3.4.1', server: 'exa' },
  { package: 'tavily-mcp', version: '0.2.22', server: 'tavily' },
  { package: '@hubspot/mcp-server', version: '0.4.0', server: 'hubspot' },
  { package: 'mongodb-mcp-server', version: '3.0.4', server: 'mongodb' },
  { package: '@zereight/mcp-gitlab', version: '2.1.64', server: 'gitlab-full', env: { USE_PIPELINE: 'true', USE_GITLAB_WIKI: 'true', USE_MILESTONE: 'true' } },
  { package: '@wonderwhy-er/desktop-commander', version: '0.2.52', server: 'desktop-commander' },
  { package: '@circleci/mcp-server-circleci', version: '0.20.0', server: 'circleci' },
  { package: '@winor30/mcp-server-datadog', version: '1.8.0', server: 'datadog' },
  { package: '@executeautomation/playwright-mcp-server', version: '1.0.12', server: 'playwright-ea' },
  { package: '@launchdarkly/mcp-server', version: '0.6.2', server: 'launchdarkly', args: ['start', '--api-key', 'dummy'] },
  { package: '@shortcut/mcp', version: '0.25.0', server: 'shortcut' },
  { package: '@aashari/mcp-server-atlassian-jira', version: '3.3.0', server: 'jira' },
  { package: '@perplexity-ai/mcp-server', version: '1.2.1', server: 'perplexity' },
  { package: '@brave/brave-search-mcp-server', version: '2.1.4', server: 'brave' },
  { package: '@mobilenext/mobile-mcp', version: '1.0.4', server: 'mobile' },
  { package: 'figma-developer-mcp', version: '0.13.2', server: 'figma', args: ['--stdio', '--figma-api-key=dummy'] },
  { package: '@larksuiteoapi/lark-mcp', version: '0.5.1', server: 'lark', args: ['mcp', '-a', 'cli_dummy', '-s', 'dummy'] },
  { package: '@antv/mcp-server-chart', version: '0.9.10', server: 'chart' },
  { package: '@elastic/mcp-server-elasticsearch', version: '0.3.1', server: 'elasticsearch' },
  { package: '@browserbasehq/mcp-server-browserbase', version: '2.4.3', server: 'browserbase' },
  { package: 'n8n-mcp', version: '2.87.0', server: 'n8n', env: { MCP_MODE: 'stdio', N8N_API_URL: 'http://127.0.0.1:1', N8N_API_KEY: 'dummy' } },
  { package: '@google-cloud/cloud-run-mcp', version: '1.10.0', server: 'cloud-run' },
  { package: '@drawio/mcp', version: '1.6.1', server: 'drawio' },
  { package: 'next-devtools-mcp', version: '0.4.0', server: 'next-devtools' },
  { package: '@currents/mcp', version: '2.1.1', server: 'currents', env: { CURRENTS_API_KEY: 'dummy' } },
  { package: '@eslint/mcp', version: '0.3.13', server: 'eslint' },
  { package: 'xcodebuildmcp', version: '2.7.0', server: 'xcodebuild', bin: 'xcodebuildmcp', args: ['mcp'] },
  { package: 'creem', version: '1.13.0', server: 'creem', args: ['start', '--api-key', 'dummy'] },
];

export interface CorpusServer {
  package: string;
  version: string;
  /** The package's `license` field as published (missing: not stated in package.json). */
  license?: string;
  server: string;
  tools: Record<string, unknown>[];
}

export interface Corpus {
  capturedAt: string;
  servers: CorpusServer[];
}

function prefixOf(root: string, pkg: string): string {
  return join(root, `pkg_${pkg.replace(/^@/, '').replace(/\//g, '_')}`);
}

function install(root: string, source: Source): string {
  const prefix = prefixOf(root, source.package);
  const pkgDir = join(prefix, 'node_modules', source.package);
  if (!existsSync(join(pkgDir, 'package.json'))) {
    mkdirSync(prefix, { recursive: true });
    execFileSync('npm', ['i', '--prefix', prefix, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', `${source.package}@${source.version}`], {
      stdio: 'inherit',
      env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: '1' },
    });
  }
  return pkgDir;
}

interface Manifest {
  version: string;
  license?: string;
  bin?: string | Record<string, string>;
}

function manifestOf(pkgDir: string): Manifest {
  return JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as Manifest;
}

function binOf(pkgDir: string, source: Source): string {
  const manifest = manifestOf(pkgDir);
  if (manifest.version !== source.version) throw new Error(`installed ${manifest.version}, want ${source.version}`);
  const bin = manifest.bin;
  if (typeof bin === 'string') return join(pkgDir, bin);
  if (!bin) throw new Error('no bin');
  const rel = source.bin ? bin[source.bin] : Object.values(bin)[0];
  if (!rel) throw new Error(`no bin ${source.bin}`);
  return join(pkgDir, rel);
}

/** Keeps what a search index reads; drops output schemas, `_meta` and icons to keep the file small. */
function slim(tool: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { name: tool.name };
  for (const key of ['title', 'description', 'inputSchema', 'annotations'] as const) {
    if (tool[key] !== undefined) out[key] = tool[key];
  }
  return out;
}

async function list(root: string, source: Source, timeoutMs: number): Promise<{ license?: string; tools: Record<string, unknown>[] }> {
  const pkgDir = install(root, source);
  const { license } = manifestOf(pkgDir);
  const entry = binOf(pkgDir, source);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: SANDBOX,
    ...DUMMY_ENV,
    ...source.env,
  };
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [entry, ...(source.args ?? [])],
    env,
    cwd: SANDBOX,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'switchboard-corpus-capture', version: '0.0.0' });
  const timer = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timeout ${timeoutMs} ms`)), timeoutMs).unref());
  try {
    return await Promise.race([
      (async () => {
        await client.connect(transport);
        const tools: Record<string, unknown>[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : undefined);
          tools.push(...(page.tools as unknown as Record<string, unknown>[]));
          cursor = page.nextCursor;
        } while (cursor);
        return { ...(license ? { license } : {}), tools };
      })(),
      timer,
    ]);
  } finally {
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const opt = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const root = resolve(opt('--dir') ?? '/tmp/corpus-pkgs');
  const only = opt('--only')?.split(',');
  const here = dirname(fileURLToPath(import.meta.url));
  const outPath = resolve(opt('--out') ?? join(here, 'corpus.json'));
  mkdirSync(SANDBOX, { recursive: true });
  mkdirSync(root, { recursive: true });

  // With --only, the other servers are kept from the existing corpus.
  const previous: Corpus | undefined = only && existsSync(outPath) ? (JSON.parse(readFileSync(outPath, 'utf8')) as Corpus) : undefined;
  const results = new Map<string, CorpusServer>();
  for (const s of previous?.servers ?? []) results.set(s.server, s);

  const todo = SOURCES.filter((s) => !only || only.includes(s.server));
  const seen = new Map<string, string>(); // fingerprint of a tool list → server, to drop identical servers
  for (const s of previous?.servers ?? []) seen.set(JSON.stringify(s.tools.map((t) => t.name).sort()), s.server);
  const concurrency = 6;
  let next = 0;
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < todo.length) {
        const source = todo[next++] as Source;
        try {
          const listed = await list(root, source, 60_000);
          const tools = listed.tools.map(slim);
          if (tools.length === 0) throw new Error('no tools');
          results.set(source.server, {
            package: source.package,
            version: source.version,
            ...(listed.license ? { license: listed.license } : {}),
            server: source.server,
            tools,
          });
          console.log(`${source.server.padEnd(20)} ${String(tools.length).padStart(4)}  ${source.package}@${source.version}`);
        } catch (err) {
          failures.push(`${source.server}: ${(err as Error).message}`);
          console.log(`${source.server.padEnd(20)} FAIL  ${(err as Error).message}`);
        }
      }
    }),
  );

  const servers: CorpusServer[] = [];
  for (const source of SOURCES) {
    const entry = results.get(source.server);
    if (!entry) continue;
    const fingerprint = JSON.stringify(entry.tools.map((t) => t.name).sort());
    const twin = seen.get(fingerprint);
    if (twin && twin !== entry.server) {
      console.log(`${entry.server}: same tools as ${twin}, dropped`);
      continue;
    }
    seen.set(fingerprint, entry.server);
    servers.push(entry);
  }
  const corpus: Corpus = { capturedAt: new Date().toISOString(), servers };
  writeFileSync(outPath, `${JSON.stringify(corpus, null, 1)}\n`);
  const total = servers.reduce((n, s) => n + s.tools.length, 0);
  console.log(`\n${servers.length} servers, ${total} tools → ${outPath}`);
  if (failures.length) console.log(`left out:\n  ${failures.join('\n  ')}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
