/**
 * Resolves after `ms`; the timer is cleared when `signal` aborts. The timer keeps the process
 * alive like any awaited work: teardown polls for processes it has no handle on (a `setsid`
 * helper) with it, and an unref'd timer let the event loop run dry in the middle of that wait,
 * so `serve` ended with Node's exit code 13 (unsettled top-level await) instead of 0.
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
