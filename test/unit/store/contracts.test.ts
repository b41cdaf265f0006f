import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { openMemoryOAuthStore, openToolCache } from '../../../src/store/open-tool-cache.js';
import { MemoryStateStore, SqliteStateStore } from '../../../src/store/state-store.js';
import { SqliteToolCacheStore } from '../../../src/store/tool-cache-store.js';
import { MemoryAgentStore, SqliteAgentStore } from '../../../src/store/agent-store.js';
import { describeAgentContract } from './contracts/agent-contract.js';
import { describeCredentialContract } from './contracts/credential-contract.js';
import { describeOAuthContract } from './contracts/oauth-contract.js';
import { describeStateContract } from './contracts/state-contract.js';
import { describeToolCacheContract } from './contracts/tool-cache-contract.js';
import { withLatency } from '../../helpers/late-store.js';
import { tempDir } from './store-helpers.js';
import { postgresStores } from '../../helpers/pg-stores.js';
import { describeAuditContract } from './contracts/audit-contract.js';
import { describePinContract } from './contracts/pin-contract.js';
import { MemoryToolPinStore } from '../../../src/store/tool-pin-store.js';
import { openAuditStore } from '../../../src/store/audit-store.js';
import { MemoryBudgetStore } from '../../../src/store/budget-store.js';
import { describeBudgetContract } from './contracts/budget-contract.js';
import { MemoryTaskStore } from '../../../src/store/task-store.js';
import { describeTaskContract } from './contracts/task-contract.js';

/**
 * Every backend of every store port against the port's contract: SQLite (file and in memory),
 * memory, and PostgreSQL (issue #28: a fresh database per test on the suite's server). A new
 * backend adds one line per port here.
 */

/** The stores of a fresh SQLite file, closed when the test ends. */
function sqliteFile(now?: () => number) {
  const opened = openToolCache(join(tempDir(), 'state.db'), now ? { now } : {});
  onTestFinished(async () => {
    await opened.store.close();
    await opened.oauth.close();
  });
  if (!(opened.store instanceof SqliteToolCacheStore)) throw new Error(`no SQLite store: ${opened.warnings.join('; ')}`);
  return opened;
}

/** A store on its own in-memory database, closed when the test ends. */
function sqliteMemory(now: () => number): SqliteToolCacheStore {
  const opened = openDatabase(':memory:');
  const store = new SqliteToolCacheStore(opened.db!, { now });
  onTestFinished(() => store.close());
  return store;
}

function memoryOAuth() {
  const store = openMemoryOAuthStore();
  onTestFinished(() => store.close());
  return store;
}

describeToolCacheContract('SQLite file', async ({ now }) => sqliteFile(now).store);
describeToolCacheContract('SQLite in memory', async ({ now }) => sqliteMemory(now));
// Not a backend: proof that the suite holds a store that answers later, as a networked one does.
describeToolCacheContract('PostgreSQL', async ({ now }) => (await postgresStores({ now })).store);
describeToolCacheContract('SQLite in memory, answering 2 ms late', async ({ now }) => withLatency(sqliteMemory(now), 2));

describeStateContract('SQLite file', async () => sqliteFile().state);
describeStateContract('SQLite in memory', async () => {
  const opened = openDatabase(':memory:');
  onTestFinished(() => opened.close());
  return new SqliteStateStore(opened.db!);
});
describeStateContract('memory', async () => new MemoryStateStore());
describeStateContract('PostgreSQL', async () => (await postgresStores()).state);

describeCredentialContract('SQLite file', async () => sqliteFile().credentials);
describeCredentialContract('SQLite in memory', async () => memoryOAuth().credentials);
describeCredentialContract('PostgreSQL', async () => (await postgresStores()).credentials);

describeOAuthContract('SQLite file', async () => sqliteFile().oauth);
describeOAuthContract('SQLite in memory', async () => memoryOAuth());
describeOAuthContract('PostgreSQL', async () => (await postgresStores()).oauth);

describeAgentContract('SQLite file', async () => {
  const { agents } = sqliteFile();
  if (!(agents instanceof SqliteAgentStore)) throw new Error('no SQLite agent store');
  return agents;
});
describeAgentContract('memory', async () => new MemoryAgentStore());
describeAgentContract('PostgreSQL', async () => (await postgresStores()).agents);

describePinContract('memory', async () => new MemoryToolPinStore());
describePinContract('SQLite file', async () => sqliteFile().pins);
describePinContract('PostgreSQL', async () => (await postgresStores()).pins);

describeBudgetContract('memory', async () => new MemoryBudgetStore());
describeBudgetContract('SQLite file', async () => sqliteFile().budgets!);
describeBudgetContract('PostgreSQL', async () => (await postgresStores()).budgets!);

describeTaskContract('memory', async () => new MemoryTaskStore());
describeTaskContract('SQLite file', async () => sqliteFile().tasks!);
describeTaskContract('PostgreSQL', async () => (await postgresStores()).tasks!);

describeAuditContract('SQLite file', async () => sqliteFile().audit);
describeAuditContract('SQLite in memory', async () => {
  const audit = openAuditStore(undefined, true);
  onTestFinished(() => audit.close());
  return audit;
});
describeAuditContract('PostgreSQL', async () => (await postgresStores()).audit);
