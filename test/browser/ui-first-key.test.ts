import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestBrowser, seriousA11yViolations, watchProblems, type PageProblems, type TestBrowser } from '../helpers/browser.js';
import { startEchoDaemon, type TestDaemon } from '../helpers/daemon.js';

/**
 * Issue #36 item 5 in Chromium: a daemon without a token, whose first agent key is made from the
 * dashboard — scoped, as the CLI can — says that every client now needs a key and where the
 * operator key is; the sign-in form then says which key to paste and where to find it, and that
 * key works.
 */

let d: TestDaemon;
let browser: TestBrowser;
let page: Page;
let watched: PageProblems;

beforeAll(async () => {
  [d, browser] = await Promise.all([startEchoDaemon({ lifetime: 'manual' }), openTestBrowser()]);
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(10_000);
  // Once the first key exists the page's next requests are refused: that is this file's story.
  watched = watchProblems(page, [/status of 401 \(Unauthorized\)/]);
});

afterAll(async () => {
  await browser?.close();
  await d?.close();
});

describe('the first agent key, made from the dashboard', () => {
  it('creates a scoped key and says that clients now need one, and where the operator key is', async () => {
    await page.goto(`${d.url}/ui`);
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByLabel('New agent').fill('inspector');
    await page.getByLabel('Servers').fill('echo, git*');
    await page.getByLabel('Access').selectOption('read');
    await page.getByLabel('Catalogue').selectOption('full');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => page.locator('[data-key]').textContent()).toMatch(/^sbk_/);

    const operatorKeyFile = join(dirname(d.config.dbPath as string), 'operator.key');
    const notice = await page.locator('[data-first-key]').textContent();
    expect(notice).toContain('every client without a key now gets 401');
    expect(notice).toContain(operatorKeyFile);
    expect(await seriousA11yViolations(page)).toEqual([]);

    const operatorKey = (await readFile(operatorKeyFile, 'utf8')).trim();
    const shown = await d.json('/agents/inspector', { headers: { authorization: `Bearer ${operatorKey}` } });
    expect(shown.body).toMatchObject({ name: 'inspector', servers: ['echo', 'git*'], access: 'read', catalogue: 'full' });
  });

  it('asks for the operator key by name and place, and takes the one from operator.key', async () => {
    await page.reload();
    const form = page.getByRole('main', { name: 'Sign in' });
    await form.waitFor();
    const hint = await form.locator('.hint').textContent();
    expect(hint).toContain('operator key');
    expect(hint).toContain('operator.key');
    expect(hint).toContain('token');
    expect(await seriousA11yViolations(page)).toEqual([]);

    const operatorKey = (await readFile(join(dirname(d.config.dbPath as string), 'operator.key'), 'utf8')).trim();
    await page.getByLabel('Key').fill(operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back on the view it was on (#/agents), now as the operator.
    await page.locator('tr[data-agent="inspector"][data-status="active"]').waitFor();
  });

  it('had no console error and no failed request beyond the refused requests', () => {
    expect(watched.problems.join('\n')).toBe('');
  });
});
