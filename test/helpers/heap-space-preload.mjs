// Preloaded with `node --import` into a daemon under test (issue #44 item 3): on SIGUSR2 it logs
// the size of V8's young generation (`new_space`), then allocates ~24 MB of objects that survive
// a few scavenges and logs the size again, as one JSON line on stdout
// ({"msg":"heap-space","before":…,"after":…}, bytes) that the test reads among the daemon's logs.
import { getHeapSpaceStatistics } from 'node:v8';

const newSpaceSize = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? Number.NaN;

process.on('SIGUSR2', () => {
  const before = newSpaceSize();
  const kept = [];
  for (let i = 0; i < 300_000; i += 1) kept.push({ i, text: `item ${i}`, list: [i] });
  const after = newSpaceSize();
  process.stdout.write(`${JSON.stringify({ msg: 'heap-space', before, after, kept: kept.length })}\n`);
});
