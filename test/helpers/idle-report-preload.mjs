// Preloaded with `node --import` into a daemon under test (issue #44 item 3): on SIGUSR2 it
// reports, as one JSON line on stdout that the test reads among the daemon's logs
// ({"msg":"idle-report","seq":n,…}, n counting the reports from 1):
// - `builtins`: node's built-in modules loaded so far;
// - `before`, `after`: the size of V8's young generation (`new_space`, bytes) before and after
//   allocating ~24 MB of objects that survive a few scavenges;
// - `optimised`: whether V8 optimises a function with TurboFan when asked now
//   (`%OptimizeFunctionOnNextCall`, compiled at once); `firstOptimised`: the same for the function
//   of the first report, asked again (a function that ran hot while TurboFan was off).
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

setFlagsFromString('--allow-natives-syntax');
const status = new Function('f', 'return %GetOptimizationStatus(f)');
const optimiseNow = new Function('f', '%PrepareFunctionForOptimization(f); f(1); f(2); %OptimizeFunctionOnNextCall(f); f(3);');
/** V8's `OptimizationStatus::kTurboFanned`. */
const TURBOFANNED = 1 << 6;
const turbofanned = (f) => {
  optimiseNow(f);
  return (status(f) & TURBOFANNED) !== 0;
};

const newSpaceSize = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? Number.NaN;

let seq = 0;
let first;
process.on('SIGUSR2', () => {
  seq += 1;
  const builtins = process.moduleLoadList.filter((entry) => entry.startsWith('NativeModule ')).map((entry) => entry.slice('NativeModule '.length));
  const fresh = new Function('x', 'let s = 0; for (let i = 0; i < 10; i += 1) s += x * i; return s;');
  first ??= fresh;
  const optimised = turbofanned(fresh);
  const firstOptimised = turbofanned(first);
  const before = newSpaceSize();
  const kept = [];
  for (let i = 0; i < 300_000; i += 1) kept.push({ i, text: `item ${i}`, list: [i] });
  const after = newSpaceSize();
  process.stdout.write(`${JSON.stringify({ msg: 'idle-report', seq, builtins, before, after, optimised, firstOptimised, kept: kept.length })}\n`);
});
