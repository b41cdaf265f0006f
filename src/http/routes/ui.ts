import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import { SwitchboardError } from '../../errors.js';

export interface UiRoutesOptions {
  /**
   * The directory `scripts/bundle.mjs` builds the dashboard into.
   * @default the first `dist/ui` above this module (source, tsc build and CLI bundle alike)
   */
  dir?: string;
}

/** The routes `createAuthHook` lets through without a key: the page and its files hold no data. */
export const UI_ROUTES = ['/ui', '/ui/:file'] as const;

/**
 * The page may load only its own files and talk only to this daemon: no inline script, no
 * framing (clickjacking of the approve buttons), no form posting elsewhere. Images and audio
 * from tool results are shown as `data:` URLs, so those are allowed for media only.
 */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};

/** Only names the build writes (`app.js`, `app.css`, their maps): no path can leave the directory. */
const FILE_NAME = /^[a-z0-9-]+(\.[a-z0-9]+)+$/;

/**
 * `GET /ui` (the dashboard's page) and `GET /ui/:file` (its script, style sheet and source maps),
 * read from the build on each request: they are a few files, asked for once per page load.
 * Every answer carries the CSP; a daemon built without the dashboard answers 404 with a hint.
 */
export const uiRoutes: FastifyPluginCallback<UiRoutesOptions> = (app, options, done) => {
  // Looked up on first use, so a daemon started before `npm run build` finished still finds it.
  let found = options.dir;

  const serve = async (reply: FastifyReply, name: string): Promise<FastifyReply> => {
    const type = TYPES[name.slice(name.lastIndexOf('.'))];
    const dir = (found ??= findUiDir());
    if (!FILE_NAME.test(name) || type === undefined || dir === undefined) throw notBuilt(dir, name);
    let body: Buffer;
    try {
      body = await readFile(join(dir, name));
    } catch {
      throw notBuilt(dir, name);
    }
    return reply.type(type).send(body);
  };

  app.addHook('onSend', (_request, reply, payload, next) => {
    void reply.header('content-security-policy', UI_CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer').header('cache-control', 'no-cache');
    next(null, payload);
  });

  app.get('/ui', (_request, reply) => serve(reply, 'index.html'));
  app.get<{ Params: { file: string } }>('/ui/:file', (request, reply) => serve(reply, request.params.file));
  done();
};

function notBuilt(dir: string | undefined, name: string): SwitchboardError {
  if (dir === undefined) return new SwitchboardError('ROUTE_NOT_FOUND', 'The dashboard is not built: run `npm run build`');
  return new SwitchboardError('ROUTE_NOT_FOUND', `No dashboard file "${name}"`);
}

/** Walks up from this module to the package root's `dist/ui` (two levels up from source, one from the bundle). */
function findUiDir(): string | undefined {
  let here = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    // `app.js` only exists in a build: the repository's `ui/` (the sources) never matches.
    for (const candidate of [join(here, 'dist', 'ui'), join(here, 'ui')]) {
      if (existsSync(join(candidate, 'app.js'))) return candidate;
    }
    const parent = dirname(here);
    if (parent === here) break;
    here = parent;
  }
  return undefined;
}
