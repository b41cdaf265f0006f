import type { FetchLike } from '@modelcontextprotocol/client';
import { errorMessage } from '../../errors.js';

/**
 * Keeping the first real cause of a failed connect (issue #29 item 4). An HTTP upstream that
 * fails the Streamable HTTP handshake may also fail the legacy SSE fallback, whose error
 * ("SSE error: Non-200 status code (404)") says nothing about why; and the SDK's own error
 * keeps only the last answer of its probe-then-initialize sequence. So the first error answer
 * the server gave is noted here, on the response, and a failed fallback reports that.
 */

/** An error answer of the server: its status and the start of its body. */
export interface HttpFailure {
  status: number;
  text: string;
}

/** How much of an error answer's body is kept: enough to read, never a whole page. */
const TEXT_LIMIT = 200;

/** Notes the error answers (4xx/5xx) a fetch receives; auth challenges are OAuth's business, not a cause. */
export function watchHttpFailures(base: FetchLike, onFailure: (failure: HttpFailure) => void): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (response.status >= 400 && response.status !== 401 && response.status !== 403) {
      const text = await response
        .clone()
        .text()
        .catch(() => '');
      onFailure({ status: response.status, text: text.replace(/\s+/g, ' ').trim().slice(0, TEXT_LIMIT) });
    }
    return response;
  };
}

/** Streamable HTTP failed, and so did the legacy SSE fallback: the message leads with the first cause. */
export class FallbackFailedError extends Error {
  override readonly name = 'FallbackFailedError';

  constructor(first: HttpFailure | undefined, httpError: unknown, sseError: unknown) {
    const cause = first ? `the server answered HTTP ${first.status}${first.text ? ` (${first.text})` : ''}` : errorMessage(httpError);
    super(`${cause}; the legacy SSE fallback failed too: ${errorMessage(sseError)}`, { cause: httpError });
  }
}
