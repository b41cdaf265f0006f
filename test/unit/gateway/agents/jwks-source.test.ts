import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtVerify } from 'jose';
import { describe, expect, it, onTestFinished } from 'vitest';
import { JWKS_REFRESH_COOLDOWN_MS, JwksSource, maxAgeOf } from '../../../../src/gateway/agents/jwks-source.js';
import { verifyJwt } from '../../../../src/gateway/agents/jwt-verify.js';
import { TEST_AUDIENCE, TEST_ISSUER, newSigningKey, startJwksServer } from '../../../helpers/jwks-server.js';
import { ManualClock } from '../../../helpers/manual-clock.js';

/** Issue #40 item 4: the provider's keys, cached by their Cache-Control, refreshed for an unknown kid at most once per cooldown. */

function silentLogger(): { warn: (...args: unknown[]) => void; warnings: unknown[][] } {
  const warnings: unknown[][] = [];
  return { warn: (...args: unknown[]) => void warnings.push(args), warnings };
}

describe('JwksSource', () => {
  it('keeps keys as long as Cache-Control max-age says, then revalidates (304 keeps them)', async () => {
    const jwks = await startJwksServer();
    jwks.cacheControl = 'public, max-age=120';
    const clock = new ManualClock();
    const source = new JwksSource({ url: jwks.url, clock, logger: silentLogger() });
    const token = await jwks.sign({ sub: 'a' });
    await jwtVerify(token, await source.keys());
    expect(jwks.fetches).toBe(1);
    clock.advance(119_000);
    await source.keys();
    expect(jwks.fetches).toBe(1);
    clock.advance(2_000);
    // Stale: fetched again; the unchanged document answers 304 and the keys still verify.
    await jwtVerify(token, await source.keys());
    expect(jwks.fetches).toBe(2);
  });

  it('floors no-store and tiny max-ages at a minute, so each token does not cost a fetch', async () => {
    expect(maxAgeOf('no-store')).toBe(60_000);
    expect(maxAgeOf('max-age=5')).toBe(60_000);
    expect(maxAgeOf('max-age=600')).toBe(600_000);
    expect(maxAgeOf('max-age=99999999')).toBe(24 * 60 * 60_000);
    expect(maxAgeOf(null)).toBe(10 * 60_000);
    const jwks = await startJwksServer();
    jwks.cacheControl = 'no-store';
    const clock = new ManualClock();
    const source = new JwksSource({ url: jwks.url, clock, logger: silentLogger() });
    await source.keys();
    clock.advance(59_000);
    await source.keys();
    expect(jwks.fetches).toBe(1);
    clock.advance(2_000);
    await source.keys();
    expect(jwks.fetches).toBe(2);
  });

  it('refreshes for an unknown kid at most once per cooldown, and concurrent askers share one fetch', async () => {
    const jwks = await startJwksServer();
    const clock = new ManualClock();
    const source = new JwksSource({ url: jwks.url, clock, logger: silentLogger() });
    await source.keys();
    const refreshed = await Promise.all([source.refreshForUnknownKid(), source.refreshForUnknownKid(), source.refreshForUnknownKid()]);
    expect(refreshed.every((keys) => keys !== undefined)).toBe(true);
    expect(jwks.fetches).toBe(2);
    clock.advance(JWKS_REFRESH_COOLDOWN_MS - 1);
    expect(await source.refreshForUnknownKid()).toBeUndefined();
    expect(jwks.fetches).toBe(2);
    clock.advance(1);
    expect(await source.refreshForUnknownKid()).toBeDefined();
    expect(jwks.fetches).toBe(3);
  });

  it('serves the keys it has when the provider stops answering; without any, JWKS_UNAVAILABLE', async () => {
    const jwks = await startJwksServer();
    const clock = new ManualClock();
    const logger = silentLogger();
    const source = new JwksSource({ url: jwks.url, clock, logger });
    const token = await jwks.sign({ sub: 'a' });
    await source.keys();
    await jwks.close();
    clock.advance(24 * 60 * 60_000);
    await jwtVerify(token, await source.keys());
    expect(logger.warnings).toHaveLength(1);
    expect(JSON.stringify(logger.warnings)).not.toContain(token);

    const cold = new JwksSource({ url: jwks.url, clock, logger });
    await expect(cold.keys()).rejects.toMatchObject({ code: 'JWKS_UNAVAILABLE' });
    const verdict = await verifyJwt(token, { issuer: TEST_ISSUER, audiences: [TEST_AUDIENCE], clockToleranceSeconds: 30, keys: cold, clock });
    expect(verdict).toEqual({ ok: false, code: 'JWKS_UNAVAILABLE' });
  });

  it('reads a jwksFile, and re-reads it for a kid it lacks (rotation by rewriting the file)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-jwks-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'jwks.json');
    const first = await newSigningKey();
    await writeFile(file, JSON.stringify({ keys: [first.publicJwk] }));
    const clock = new ManualClock(Date.now());
    const source = new JwksSource({ file, clock, logger: silentLogger() });
    const check = { issuer: TEST_ISSUER, audiences: [TEST_AUDIENCE], clockToleranceSeconds: 30, keys: source, clock };
    const jwks = await startJwksServer();
    const signed = (key: typeof first): Promise<string> => jwks.sign({ sub: 'a' }, { key });
    expect((await verifyJwt(await signed(first), check)).ok).toBe(true);
    const second = await newSigningKey();
    await writeFile(file, JSON.stringify({ keys: [second.publicJwk] }));
    expect((await verifyJwt(await signed(second), check)).ok).toBe(true);
    expect(source.fetches).toBe(2);
  });
});
