// Preloaded into the daemon by the memory benchmarks (node --expose-gc --import <this>): SIGUSR2
// runs a full garbage collection, so RSS is read after one, and says so on stderr with the
// heap figures after it (a growing heap is a leak; a growing RSS alone may be the allocator) and
// each V8 heap space's physical size in bytes (bench/idle-breakdown.ts).
import { getHeapSpaceStatistics } from 'node:v8';

process.on('SIGUSR2', () => {
  globalThis.gc?.();
  const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size]));
  process.stderr.write(`bench-gc-done ${JSON.stringify({ heapUsed, heapTotal, external, arrayBuffers, spaces })}\n`);
});
