import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContextOptions, type Page, type Request } from 'playwright-core';
import type { ServerRow } from './oauth.js';

/**
 * Headless Chromium from Debian, driven by playwright-core: no browser download. One browser per
 * test worker; pages are cheap. Debian's `chromium-headless-shell` where it is installed (.ci/run
 * installs it): the same Chromium release built as the old headless shell, without the desktop
 * browser that `chromium --headless` runs windowless, so the same pages and checks cost about
 * half the CPU (the five browser files: Chromium's processes 29.7 → 15.5 s on the 2-core box,
 * issue #34). Else the full `chromium --headless`, as on a machine with only `apt-get install
 * chromium`.
 */
const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';
export const CHROMIUM = process.env.SWITCHBOARD_CHROMIUM ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'];

/** Where screenshots go (gitignored); `UPDATE_DOCS_SCREENSHOTS=1` also copies two of them to docs/ for the README. */
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

/** The browser a test file drives: its pages, each in a context of its own, closed together. */
export interface TestBrowser {
  /** A page in a new browser context: cookies, storage and cache of its own, as in a browser of its own. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /** Closes every page this file opened (and their contexts); the worker's browser stays. */
  close(): Promise<void>;
}

let shared: Promise<Browser> | undefined;

/**
 * The worker's Chromium, launched by the first browser test file the worker runs and kept for the
 * worker's life (files share a worker, `isolate: false`): a launch and its first page cost ~2 s of
 * CPU, paid once per worker instead of once per file. Launched again if it went away.
 *
 * It ends with the worker, however the worker ends: Chromium exits when its control pipe closes.
 * Playwright's signal handlers are left out: on SIGTERM (how vitest stops a worker) they would close
 * the browser and keep the worker running until vitest's SIGKILL.
 */
function workerBrowser(): Promise<Browser> {
  const launched = shared;
  if (launched) return launched.then((browser) => (browser.isConnected() ? browser : launchAgain()));
  return launchAgain();
}

function launchAgain(): Promise<Browser> {
  const launching = chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true, handleSIGTERM: false, handleSIGINT: false, handleSIGHUP: false });
  // A failed launch is not kept: the next file tries again.
  launching.catch(() => {
    if (shared === launching) shared = undefined;
  });
  shared = launching;
  return launching;
}

/** A file's view of the worker's browser (see workerBrowser): close() in afterAll closes the file's pages. */
export async function openTestBrowser(): Promise<TestBrowser> {
  const browser = await workerBrowser();
  const pages: Page[] = [];
  return {
    newPage: async (options) => {
      const page = await browser.newPage(options);
      pages.push(page);
      return page;
    },
    // Browser.newPage's context belongs to its page: closing the page closes the context.
    close: async () => {
      await Promise.all(pages.map((page) => page.close()));
    },
  };
}

/** What went wrong in the page: console errors, uncaught exceptions and requests that failed. */
export interface PageProblems {
  readonly problems: string[];
}

/**
 * Records console errors, page errors and failed requests. `expected` lists console texts a test
 * causes on purpose (a refused key's 401); anything else is a problem.
 */
export function watchProblems(page: Page, expected: RegExp[] = []): PageProblems {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    const text = message.text();
    if (!expected.some((pattern) => pattern.test(text))) problems.push(`console ${message.type()}: ${text}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  // A document's requests still unanswered when the page moves on to another document (a reload, a
  // goto) are aborted by the browser itself: that is navigation, not a failure. Judged by the
  // document that sent a request, not by what was in flight when the navigation was asked for: the
  // old page's timers go on sending (a /status refresh, say) until the new document commits, which
  // a busy box delays. A hash change (the dashboard's views) is no new document: no request, and no
  // commit counted here.
  let documents = 0;
  let navigating = false;
  const sentBy = new WeakMap<Request, number>();
  page.on('request', (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) navigating = true;
    sentBy.set(request, documents);
  });
  page.on('framenavigated', (frame) => {
    if (frame !== page.mainFrame() || !navigating) return;
    navigating = false;
    documents += 1;
  });
  page.on('requestfailed', (request) => {
    // A navigation that fails commits nothing: the page stays on its document.
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) navigating = false;
    const aborted = request.failure()?.errorText === 'net::ERR_ABORTED';
    // A call the test cancels on purpose aborts its request; that is the feature, not a failure.
    if (aborted && request.method() === 'POST') return;
    if (aborted && (navigating || (sentBy.get(request) ?? documents) < documents)) return;
    problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`);
  });
  return { problems };
}

/** What the dashboard's server rows are checked against: the daemon's own `/status`. */
interface StatusSource {
  json<T = unknown>(path: string): Promise<{ body: T }>;
}

/**
 * Waits until the dashboard's row of server `name` shows `status`. On a timeout the error says
 * what the row showed and what the daemon's `/status` said of that server at that moment, so a
 * failure tells a row that never caught up from a server that never got there.
 */
export async function waitForServerRow(page: Page, daemon: StatusSource, name: string, status: string, options: { timeout?: number } = {}): Promise<void> {
  const row = page.locator(`tr[data-server="${name}"]`);
  try {
    await row.and(page.locator(`[data-status="${status}"]`)).waitFor(options);
  } catch (err) {
    const shown = await row.getAttribute('data-status', { timeout: 1000 }).catch(() => 'no row');
    const known = await daemon
      .json<{ servers: ServerRow[] }>('/status')
      .then(({ body }) => JSON.stringify(body.servers.find((server) => server.name === name) ?? 'not in /status'))
      .catch((statusErr: unknown) => `unreadable (${String(statusErr)})`);
    throw new Error(`server row "${name}" never showed ${status}: the row shows ${shown}; /status has ${known}`, { cause: err });
  }
}

const require = createRequire(import.meta.url);

interface Violation {
  id: string;
  impact: string | null;
  targets: string[];
}

/** axe-core run in the page; the serious and critical violations, as `id: target` lines. */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, not added as a <script>: the page's CSP (rightly) refuses inline scripts.
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  // A string, run in the page: this file is type-checked without the DOM library.
  const violations = await page.evaluate<Violation[]>(
    `axe.run(document).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => JSON.stringify(n.target)) })))`,
  );
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.targets.join(' ')}`);
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = `${ARTIFACTS}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}
