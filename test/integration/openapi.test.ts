import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { validate } from '@readme/openapi-parser';
import type { RouteOptions } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parse } from 'yaml';
import { DaemonConfigSchema } from '../../src/config/schema.js';
import { createDaemon } from '../../src/daemon.js';
import { discoveryOf } from '../helpers/daemon.js';
import { tempDir } from '../helpers/process.js';

/** openapi.yaml describes exactly the routes the daemon serves, and is a valid OpenAPI 3.1 file. */

const SPEC_URL = new URL('../../openapi.yaml', import.meta.url);
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Routes served without the bearer token (the auth hook's public list). */
const PUBLIC_PATHS = ['/health', '/oauth/callback', '/ui', '/ui/{file}'];

interface Operation {
  responses?: Record<string, unknown>;
  security?: unknown[];
}
type Spec = { paths: Record<string, Record<string, Operation>> };

const spec = parse(readFileSync(SPEC_URL, 'utf8')) as Spec;

function documentedRoutes(): string[] {
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => HTTP_METHODS.includes(key))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

/** Every route the app registers, as `METHOD /path/{param}`; fastify's automatic HEAD routes left out. */
async function servedRoutes(): Promise<string[]> {
  const dir = await tempDir();
  const config = DaemonConfigSchema.parse({ port: 0, logLevel: 'silent', dbPath: `${dir}/switchboard.db` });
  const daemon = createDaemon(config, {
    logger: pino({ level: 'silent' }),
    discover: async () => discoveryOf({}),
    cwd: dir,
    home: dir,
    env: {},
  });
  onTestFinished(() => daemon.close());
  const routes = new Set<string>();
  // Routes are registered by plugins at ready(), so a hook added now sees every one of them.
  daemon.app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      // We declare no HEAD route ourselves; fastify adds one per GET.
      if (method === 'HEAD') continue;
      routes.add(`${method} ${route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
    }
  });
  await daemon.app.ready();
  return [...routes];
}

describe('openapi.yaml', () => {
  it('documents every served route, and serves every documented route', async () => {
    const served = (await servedRoutes()).sort();
    const documented = documentedRoutes().sort();
    expect(served.length).toBeGreaterThan(10);
    expect(served.filter((route) => !documented.includes(route))).toEqual([]);
    expect(documented.filter((route) => !served.includes(route))).toEqual([]);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await validate(fileURLToPath(SPEC_URL));
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect((spec as unknown as { openapi: string }).openapi).toMatch(/^3\.1\./);
  });

  it('passes a third-party linter, Redocly CLI, with no error and no warning', async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const cli = fileURLToPath(new URL('../../node_modules/@redocly/cli/bin/cli.js', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'lint', 'openapi.yaml', '--format=json'], {
      cwd: root,
      // redocly.yaml turns telemetry off; this turns the update check off (no network in tests).
      env: { ...process.env, REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' },
    });
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    expect(report.problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('documents 401 on every operation but the public ones (/health, /oauth/callback, the dashboard files), and 403 on every one', () => {
    for (const route of documentedRoutes()) {
      const [method, path] = route.split(' ') as [string, string];
      const operation = spec.paths[path]![method.toLowerCase()]!;
      expect(Object.keys(operation.responses ?? {}), route).toContain('403');
      if (PUBLIC_PATHS.includes(path)) {
        expect(operation.security).toEqual([]);
        continue;
      }
      expect(Object.keys(operation.responses ?? {}), route).toContain('401');
      expect(Object.keys(operation.responses ?? {}), route).toContain('503');
    }
  });
});
