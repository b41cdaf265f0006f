import { prepareCluster } from '../../src/cluster/join-cluster.js';
import { describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { serverStatus, signIn, startOAuthFixture, type OAuthFixture, whoami } from '../helpers/oauth.js';
import { freshDatabaseUrl, postgresStores } from '../helpers/pg-stores.js';

/**
 * Issue #28 item 1: two daemons on one PostgreSQL store share an OAuth sign-in, and a token
 * refresh happens on one of them at a time (an advisory lock); the other uses the new token.
 */

/** Pings off: the clock moves by an hour and every request the fixture sees is counted. */
const NO_PINGS = { health: { enabled: true, pingIntervalMs: 0 } };

/**
 * A client registered beforehand, as a cluster uses: a dynamically registered one is bound to
 * the redirect URI of the daemon that registered it, and each test daemon has its own port.
 */
const CLIENT = { clientId: 'sb-cluster', clientSecret: 'cluster-secret' };

async function replica(fixture: OAuthFixture, url: string, clock: ManualClock): Promise<TestDaemon> {
  const stores = await postgresStores({ url });
  // A replica of the cluster on that database, as `serve` makes it.
  const cluster = await prepareCluster({ connectionString: url, pool: stores.pool!, state: stores.state });
  return startDaemon({ servers: { remote: { type: 'http', url: fixture.url, oauth: CLIENT } }, config: NO_PINGS, deps: { clock, stores, cluster } });
}

describe('OAuth on a PostgreSQL store shared by two daemons', () => {
  it('a sign-in on A connects B by itself; tokens due on both are refreshed once, and both use the new ones', async () => {
    // Started side by side, as a cluster's replicas are (migrations take turns on an advisory lock).
    const [fixture, url] = await Promise.all([startOAuthFixture({ DCR: '0', CLIENTS: `${CLIENT.clientId}:${CLIENT.clientSecret}` }), freshDatabaseUrl()]);
    const clock = new ManualClock();
    const [a, b] = await Promise.all([replica(fixture, url, clock), replica(fixture, url, clock)]);
    await signIn(a, 'remote');
    // B hears of the sign-in over the cluster channel and connects with A's tokens from the
    // shared store: no sign-in of its own, no reload by anyone.
    await serverStatus(b, 'remote', 'connected');
    const [onA, onB] = [await whoami(a), await whoami(b)];
    expect(onB.clientId).toBe(CLIENT.clientId);
    expect(onA.clientId).toBe(CLIENT.clientId);
    expect((await fixture.state()).as).toMatchObject({ codeGrants: 1, refreshGrants: 0 });

    // Both inside the token's last minute at once: each would refresh before its request leaves.
    clock.advance(60 * 60_000 - 30_000);
    const calls = await Promise.all([whoami(a), whoami(b), whoami(a), whoami(b)]);
    expect(calls.map((call) => call.clientId)).toEqual(Array(4).fill(CLIENT.clientId));
    expect((await fixture.state()).as).toMatchObject({ codeGrants: 1, refreshGrants: 1, rejectedRefreshes: 0 });
  });
});
