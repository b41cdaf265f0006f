// Preloaded into the daemon by the memory benchmarks (node --expose-gc --import <this>): SIGUSR2
// runs a full garbage collection, so RSS is read after one, and says so on stderr with the
// heap figures after it (a growing heap is a leak; a growing RSS alone may be the allocator).
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  process.stderr.write(`bench-gc-done ${JSON.stringify({ heapUsed, heapTotal, external, arrayBuffers })}\n`);
});
