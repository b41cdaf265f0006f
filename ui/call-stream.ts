import { ApiError, request } from './api.js';
import type { CallResult, ProgressData } from './types.js';

/** What a `progress` event carries (the daemon's own type). */
export type Progress = ProgressData;

/**
 * `POST /tools/:name/call` with `Accept: text/event-stream`: `progress` events as the server
 * sends them, then one `result` or one `error`. Aborting `signal` closes the request, which
 * cancels the upstream call (the daemon sends `notifications/cancelled`).
 */
export async function streamCall(name: string, args: Record<string, unknown>, onProgress: (p: Progress) => void, signal: AbortSignal): Promise<CallResult> {
  const response = await request(`/tools/${encodeURIComponent(name)}/call`, {
    method: 'POST',
    json: { arguments: args },
    headers: { accept: 'text/event-stream' },
    signal,
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (data === '') continue;
      const parsed = JSON.parse(data) as unknown;
      if (event === 'progress') onProgress(parsed as Progress);
      else if (event === 'result') return parsed as CallResult;
      else if (event === 'error') {
        const error = (parsed as { error: { code: string; message: string } }).error;
        throw new ApiError(200, error.code, error.message);
      }
    }
  }
  throw new Error('The call ended without a result');
}
