/** One server-sent event: its type (`message` when unnamed) and its data lines joined by `\n`. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Reads a `text/event-stream` body as it arrives, by the WHATWG rules the daemon's streams need:
 * lines end in CRLF, LF or CR; `:` starts a comment; `event` and `data` fields (one optional
 * space after the colon); a blank line dispatches the event when it has data, and an event the
 * stream ends in the middle of is dropped. `id` and `retry` are ignored: a tool call is never
 * resumed.
 */
export async function* readEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let pending = '';
  let event = '';
  let data: string[] = [];

  /** The complete lines of `pending`; at the end of the stream a last lone CR ends one too. */
  function* lines(final: boolean): Generator<string> {
    for (;;) {
      const end = pending.search(/\r\n|\r|\n/);
      // A CR at the very end may be the first half of a CRLF still on its way.
      if (end === -1 || (!final && end === pending.length - 1 && pending[end] === '\r')) return;
      const line = pending.slice(0, end);
      pending = pending.slice(end + (pending.startsWith('\r\n', end) ? 2 : 1));
      yield line;
    }
  }

  /** Takes in one line; returns the event a blank line completes. */
  const take = (line: string): SseEvent | undefined => {
    if (line === '') {
      const done = data.length > 0 ? { event: event || 'message', data: data.join('\n') } : undefined;
      event = '';
      data = [];
      return done;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    return undefined;
  };

  for await (const chunk of body) {
    pending += decoder.decode(chunk, { stream: true });
    for (const line of lines(false)) {
      const done = take(line);
      if (done) yield done;
    }
  }
  pending += decoder.decode();
  for (const line of lines(true)) {
    const done = take(line);
    if (done) yield done;
  }
}
