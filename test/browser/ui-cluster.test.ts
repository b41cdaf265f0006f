import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestBrowser, screenshot, seriousA11yViolations, watchProblems, type TestBrowser } from '../helpers/browser.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { startReplica } from '../helpers/in-process-replica.js';
import { freshDatabaseUrl } from '../helpers/pg-stores.js';

/**
 * The dashboard's Cluster view (issue #43 item 6): on a replica, a Cluster tab shows the live
 * replicas' traffic summed and one row per replica from its heartbeat, read again every 2 s
 * while the view is open.
 */

let browser: TestBrowser;

beforeAll(async () => {
  browser = await openTestBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('the Cluster view', () => {
  it("shows every replica's calls, in-flight calls and limits, and follows them", async () => {
    const url = await freshDatabaseUrl();
    const servers = { echo: { ...fixtureServerConfig('echo-stdio'), maxConcurrentCalls: 4 } };
    const [a, b] = [await startReplica(url, { servers }), await startReplica(url, { servers })];
    const idB = (await b.json<{ replicas: Array<{ id: string; self: boolean }> }>('/status')).body.replicas.find((r) => r.self)!.id;

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(15_000);
    const watched = watchProblems(page);
    await page.goto(`${a.url}/ui`);
    await page.getByRole('link', { name: 'Cluster' }).click();
    await page.locator('main[aria-label="Cluster"]').waitFor();
    await expect.poll(() => page.getByTestId('cluster-total').textContent(), { timeout: 15_000 }).toMatch(/^2 of 2 replicas live/);

    // Calls on B appear in B's row on A's page with B's next heartbeat.
    for (let i = 0; i < 3; i++) expect((await b.json('/tools/mcp_echo_echo/call', { method: 'POST', body: { arguments: { text: `b${i}` } } })).status).toBe(200);
    const rowB = page.locator(`tr[data-replica="${idB}"]`);
    await expect.poll(() => rowB.locator('[data-field="calls"]').textContent(), { interval: 250, timeout: 15_000 }).toBe('3 (0)');
    expect(await rowB.locator('[data-field="limits"]').textContent()).toBe('echo 0/4 fixed');
    expect(await rowB.locator('[data-field="inFlight"]').textContent()).toBe('0');
    expect(await page.locator('tbody tr').count()).toBe(2);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'cluster');
    expect(watched.problems).toEqual([]);
    await page.close();
  });
});
