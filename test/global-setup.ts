import type { TestProject } from 'vitest/node';
import { bundleUi } from '../scripts/bundle.mjs';
import { buildFixtures } from './helpers/build-fixtures.js';
import { startPostgres } from './helpers/postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The suite's PostgreSQL server (test/helpers/postgres-server.ts); tests make a database each. */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The dashboard is served from dist/ui (src/http/routes/ui.ts): built here as `npm start` builds it.
  // One PostgreSQL server for the whole run (issue #28): initdb takes a second, a database per test a few ms.
  const [postgres] = await Promise.all([startPostgres(), buildFixtures(), bundleUi()]);
  project.provide('postgresUrl', postgres.url);
  return () => postgres.stop();
}
