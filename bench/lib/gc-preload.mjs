// Preloaded into the daemon by the memory benchmark (node --expose-gc --import <this>): SIGUSR2
// runs a full garbage collection, so RSS is read after one, and says so on stderr.
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  process.stderr.write('bench-gc-done\n');
});
