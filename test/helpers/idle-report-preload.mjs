// Preloaded with `node --import` into a daemon under test (issue #44 item 3): on SIGUSR2 it
// reports, as one JSON line on stdout that the test reads among the daemon's logs
// ({"msg":"idle-report",…}), node's built-in modules loaded so far and the size of V8's young
// generation (`new_space`, bytes) before and after allocating ~24 MB of objects that survive a
// few scavenges.
import { getHeapSpaceStatistics } from 'node:v8';

const newSpaceSize = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? Number.NaN;

process.on('SIGUSR2', () => {
  const builtins = process.moduleLoadList.filter((entry) => entry.startsWith('NativeModule ')).map((entry) => entry.slice('NativeModule '.length));
  const before = newSpaceSize();
  const kept = [];
  for (let i = 0; i < 300_000; i += 1) kept.push({ i, text: `item ${i}`, list: [i] });
  const after = newSpaceSize();
  process.stdout.write(`${JSON.stringify({ msg: 'idle-report', builtins, before, after, kept: kept.length })}\n`);
});
