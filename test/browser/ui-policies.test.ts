import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestBrowser, screenshot, seriousA11yViolations, watchProblems, type TestBrowser } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';

/**
 * The dashboard's Policies view (issue #40 item 2): each rule in order, and beside a shadow rule
 * what it would have refused, summed by agent × tool from `GET /policies/impact`.
 */

let browser: TestBrowser;

beforeAll(async () => {
  browser = await openTestBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('the Policies view', () => {
  it('shows each rule, and beside the shadow rule the calls it would have refused', async () => {
    const d = await startDaemon({
      servers: { db: fixtureServerConfig('policy-target') },
      config: {
        policies: [
          { name: 'reads-only', match: { tools: ['query'] }, when: '!args.sql.startsWith("SELECT")', effect: 'deny', reason: 'reads only' },
          { name: 'refund-cap-trial', mode: 'shadow', match: { tools: ['refund'] }, when: 'args.amount > 10', effect: 'deny', reason: 'refunds above 10 would need a ticket' },
        ],
      },
    });
    // Three refunds, two of them over the cap: all three answered, two counted as would-be denials.
    for (const amount of [5, 20, 50]) expect((await d.json(`/tools/mcp_db_refund/call`, { method: 'POST', body: { arguments: { amount } } })).status).toBe(200);

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(15_000);
    const watched = watchProblems(page);
    await page.goto(`${d.url}/ui`);
    await page.getByRole('link', { name: 'Policies' }).click();
    await page.locator('section[aria-label="Policies"]').waitFor();

    const rules = page.locator('li[data-policy]');
    await expect.poll(() => rules.evaluateAll((items) => items.map((item) => item.getAttribute('data-policy')))).toEqual(['reads-only', 'refund-cap-trial']);
    const enforced = page.locator('li[data-policy="reads-only"]');
    expect(await enforced.textContent()).toContain('reads only');
    expect(await enforced.locator('table').count()).toBe(0);
    const shadow = page.locator('li[data-policy="refund-cap-trial"]');
    expect(await shadow.textContent()).toContain('(shadow: not enforced)');
    const cells = await shadow.locator('tbody tr').first().locator('td').allTextContents();
    expect(cells.slice(0, 3)).toEqual(['operator', 'mcp_db_refund', '2']);
    expect(cells[4]?.trim().split(' ')).toHaveLength(2);
    expect(await shadow.locator('tbody tr').count()).toBe(1);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'policies');
    expect(watched.problems).toEqual([]);
    await page.close();
  });
});
