import { bundleUi } from '../scripts/bundle.mjs';
import { buildFixtures } from './helpers/build-fixtures.js';

export default async function setup(): Promise<void> {
  // The dashboard is served from dist/ui (src/http/routes/ui.ts): built here as `npm start` builds it.
  await Promise.all([buildFixtures(), bundleUi()]);
}
