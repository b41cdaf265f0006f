/**
 * Why a networked store could not be opened at start (unreachable, or a schema from a newer
 * version). The message names the store as `host:port/database`, never with its password.
 * Apart from the backend so that `serve` can test for it without loading the driver.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
