// Bundles the CLI (src/cli.ts and everything it imports, dependencies included) into
// dist/cli.js plus lazily loaded chunks in dist/chunks/. One file to compile instead of ~700
// modules to resolve is what makes `switchboard serve` start fast; code a start may never
// need (the /mcp server side, the MCP SDK client with its schemas until the first connection,
// node-postgres, the client commands) sits in chunks behind dynamic imports and is compiled only
// when used (test/unit/bundle.test.ts keeps them there). The child watchdog a daemon
// starts (src/watchdog.ts) is a second entry, dist/watchdog.js, sharing only the /proc helpers.
// `tsc` still type-checks and emits the library (dist/index.js and the .d.ts files): see
// `npm run build`.
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { removeOthers, writeChanged } from './write-changed.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));

// Bundled CommonJS dependencies call require(); an ESM bundle has to provide one.
const REQUIRE_BANNER = "import { createRequire as __sbCreateRequire } from 'node:module'; const require = __sbCreateRequire(import.meta.url);";

/**
 * Fastify's schema compilers (ajv, fast-json-stringify, ~680 KB) and its `inject()` helper
 * (light-my-request) are required by fastify only for routes that declare a JSON schema, and for
 * `app.inject()`. Switchboard declares none (requests are parsed with zod, responses are
 * serialised by `JSON.stringify`) and the CLI never injects; without them in the bundle a start
 * compiles and evaluates that much less (issue #27). Should a route ever declare a schema, its
 * registration fails loudly with the message below instead of compiling it. Likewise duplexify
 * (with readable-stream, ~90 KB): @fastify/websocket requires it at load only for its test helper
 * `injectWS`, which the CLI never calls (issue #44).
 */
const UNUSED_IN_CLI = /^(@fastify\/ajv-compiler|@fastify\/fast-json-stringify-compiler|light-my-request|duplexify)$/;
/** Those of them that are called directly (an injector, a stream constructor) rather than through a selector. */
const CALLED_DIRECTLY = new Set(['light-my-request', 'duplexify']);
const unusedInCli = {
  name: 'unused-in-cli',
  setup(build) {
    build.onResolve({ filter: UNUSED_IN_CLI }, (args) => ({ path: args.path, namespace: 'unused-in-cli' }));
    build.onLoad({ filter: /.*/, namespace: 'unused-in-cli' }, (args) => {
      const advice = args.path === 'duplexify' ? "the CLI never injects WebSocket connections (@fastify/websocket's injectWS)" : 'declare no fastify route schema, use zod';
      const refusal = `throw new Error(${JSON.stringify(`${args.path} is left out of the CLI bundle (scripts/bundle.mjs): ${advice}`)});`;
      // The compilers export a selector fastify calls at construction; it returns the builder
      // that only a route with a schema would call. light-my-request is the injector itself,
      // duplexify the stream only injectWS builds.
      const contents = CALLED_DIRECTLY.has(args.path)
        ? `module.exports = function inject() { ${refusal} };`
        : `module.exports = function selector() { return function build() { ${refusal} }; };`;
      return { contents, loader: 'js' };
    });
  },
};

/**
 * zod 4 ships its error messages in 48 languages (`zod/v4/locales`, ~366 KB of the ~750 KB of zod
 * in the bundle) and re-exports them all as `z.locales`, so an `import * as z` keeps every one.
 * Switchboard and the MCP SDK only ever use the English messages zod configures itself with (zod
 * imports `locales/en.js` directly for that), and nothing calls `z.config(z.locales.xx())`. The
 * locales' index is replaced by English alone: a start compiles and keeps that much less
 * (issue #44). `z.locales.en` is still there; any other language is `undefined`.
 */
const englishOnlyZod = {
  name: 'english-only-zod',
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({ contents: 'export { default as en } from "./en.js";', loader: 'js' }));
  },
};

/**
 * `ws` on the first WebSocket upgrade instead of at every start (issue #44): @fastify/websocket
 * requires it at load and builds its `WebSocket.Server` (noServer) when it registers, before the
 * daemon listens, so ws's ~126 KB were compiled and run by every start although only `/events`
 * uses it. Its `ws` is this stand-in: the same `Server` surface the plugin uses (`handleUpgrade`,
 * `clients`, `close`, and the `connection` event it emits itself), loading ws with the first
 * upgrade and handing that and every later one to a real `WebSocketServer` built with the
 * plugin's options. Until ws has loaded the socket keeps an error listener (the plugin removes its
 * own just before `handleUpgrade`, where ws installs one synchronously); a socket gone meanwhile,
 * or an upgrade after `close`, is destroyed, as ws does with a handshake it can no longer
 * complete. Only the plugin's import is replaced: the CLI's own clients (`logs`, `status`) import
 * ws as it is.
 */
const LAZY_WS = readFileSync(fileURLToPath(new URL('./lazy-ws.cjs', import.meta.url)), 'utf8');
const lazyWs = {
  name: 'lazy-ws',
  setup(build) {
    // The plugin's own `require('ws')` only: the stand-in's `import('ws')` (namespace lazy-ws) is the real one.
    build.onResolve({ filter: /^ws$/, namespace: 'file' }, (args) =>
      /[\\/]@fastify[\\/]websocket[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), 'lazy-ws.js'), namespace: 'lazy-ws' } : undefined,
    );
    // Resolved from the plugin's own folder, so the real ws is the one it would have loaded.
    build.onLoad({ filter: /.*/, namespace: 'lazy-ws' }, (args) => ({ contents: LAZY_WS, loader: 'js', resolveDir: dirname(args.path) }));
  },
};

/**
 * fastify's `lib/server.js` requires `node:http2` at load, for `http2: true` servers only; the
 * daemon serves HTTP/1.1. Loading it (with its `internal/http2/*` modules) was ~0.4 MiB of an idle
 * daemon's resident set, read from node's binary and kept compiled (issue #44 item 3). In the
 * bundle it is required on first use instead. Should fastify's source change shape, the build
 * fails here rather than shipping the eager require.
 */
const FASTIFY_HTTP2_REQUIRE = "const http2 = require('node:http2')";
const lazyHttp2InFastify = {
  name: 'lazy-http2-in-fastify',
  setup(build) {
    build.onLoad({ filter: /[\\/]fastify[\\/]lib[\\/]server\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes(FASTIFY_HTTP2_REQUIRE)) throw new Error(`${args.path}: no "${FASTIFY_HTTP2_REQUIRE}" to make lazy (scripts/bundle.mjs)`);
      const lazy =
        "let loadedHttp2; const http2 = { createServer: (...a) => (loadedHttp2 ??= require('node:http2')).createServer(...a), createSecureServer: (...a) => (loadedHttp2 ??= require('node:http2')).createSecureServer(...a) }";
      return { contents: source.replace(FASTIFY_HTTP2_REQUIRE, lazy), loader: 'js' };
    });
  },
};

/**
 * Builds the CLI bundle into `outdir` (default dist/). better-sqlite3 stays external because it
 * is a native addon; bufferutil and utf-8-validate are optional speed-ups of ws that are not
 * installed. Returns esbuild's metafile.
 */
export async function bundleCli({ outdir = `${root}dist`, logLevel = 'warning' } = {}) {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
  const result = await build({
    absWorkingDir: root,
    entryPoints: { cli: 'src/cli.ts', watchdog: 'src/watchdog.ts' },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunks/[name]-[hash]',
    // The ESM builds of dependencies (jsonc-parser's UMD build requires files by relative path).
    mainFields: ['module', 'main'],
    external: ['better-sqlite3', 'bufferutil', 'utf-8-validate'],
    banner: { js: REQUIRE_BANNER },
    // package.json is not next to the bundle's modules; the version is compiled in.
    define: { __SWITCHBOARD_VERSION__: JSON.stringify(pkg.version) },
    sourcemap: 'linked',
    metafile: true,
    logLevel,
    plugins: [unusedInCli, englishOnlyZod, lazyWs, lazyHttp2InFastify],
    charset: 'ascii',
    // V8 keeps every module's source text for the life of the process (functions compile lazily
    // from it): without comments and indentation it is a third smaller, ~1 MiB less of an idle
    // daemon (issue #44 item 3). Identifiers are kept, so stack traces still name every function;
    // `node --enable-source-maps` maps their positions back to the sources.
    minifyWhitespace: true,
    minifySyntax: true,
    // Written below, only what changed (scripts/write-changed.mjs): a test run may be loading these.
    write: false,
  });
  const cli = join(outdir, 'cli.js');
  const outputs = result.outputFiles.map(({ path, contents, text }) => ({
    path,
    contents: path.endsWith('.js') ? asciiOnly(text) : contents,
    // The bin (`#!/usr/bin/env node`): runnable as ./dist/cli.js, not only through npm's bin link.
    mode: path === cli ? 0o755 : undefined,
  }));
  mkdirSync(join(outdir, 'chunks'), { recursive: true });
  writeChanged(outputs);
  // Chunks are named by their content: those of an older build are no longer imported by anything.
  removeOthers(join(outdir, 'chunks'), new Set(outputs.map(({ path }) => path)));
  chmodSync(cli, 0o755);
  return result.metafile;
}

/**
 * V8 keeps each module's source text for as long as the process lives (functions compile lazily
 * from it), and a single character beyond Latin-1 makes it a two-byte string: the serve chunk and
 * the SDK's took twice their size in the heap, ~2.5 MiB of an idle daemon (issue #44). With
 * `charset: 'ascii'` esbuild escapes strings and identifiers, but not every regular expression
 * literal (`@marcbachmann/cel-js`'s duration pattern keeps its `µs`), and it keeps some comments
 * (a dash, a section sign). Each UTF-16 unit left becomes its `\uXXXX` escape here, which means
 * the same character in a string, a template, an identifier or a regular expression, and is
 * harmless text in a comment; only columns after it on its line move in the source map.
 */
function asciiOnly(text) {
  return text.replace(/[\u0080-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Builds the dashboard (ui/main.tsx, issue #24) into `outdir` (default dist/ui/): app.js and
 * app.css, minified, for browsers, with index.html copied beside them. Everything it needs is
 * bundled (Preact, signals, uPlot): the page loads nothing from outside. Returns the metafile.
 */
export async function bundleUi({ outdir = `${root}dist/ui`, logLevel = 'warning' } = {}) {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { app: 'ui/main.tsx' },
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'firefox111', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: 'linked',
    metafile: true,
    legalComments: 'none',
    logLevel,
    // Written below, only what changed (scripts/write-changed.mjs): a running daemon may be serving these.
    write: false,
  });
  const outputs = [...result.outputFiles, { path: join(outdir, 'index.html'), contents: readFileSync(`${root}ui/index.html`) }];
  mkdirSync(outdir, { recursive: true });
  writeChanged(outputs);
  removeOthers(outdir, new Set(outputs.map(({ path }) => path)));
  return result.metafile;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  await bundleCli();
  await bundleUi();
  console.log(`bundled dist/cli.js, dist/watchdog.js and dist/ui/ in ${Math.round(performance.now() - started)} ms`);
}
