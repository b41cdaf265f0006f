import { buildFixtures } from './helpers/build-fixtures.js';

export default async function setup(): Promise<void> {
  await buildFixtures();
}
