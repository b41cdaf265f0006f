/**
 * Reads the events of a `text/event-stream` fetch Response one at a time, so a test can act at
 * exactly the point an event arrives (the first progress: the upstream call is running). Kept
 * apart from the CLI's parser on purpose: the daemon's stream is checked by a second reading.
 */
export interface TestSseEvent {
  event: string;
  data: unknown;
}

export interface SseReader {
  /** The next event, or undefined once the stream has ended. Comment-only blocks are skipped. */
  next(): Promise<TestSseEvent | undefined>;
  /** Every event left, until the stream ends. */
  rest(): Promise<TestSseEvent[]>;
}

export function sseReader(res: Response): SseReader {
  if (!res.body) throw new Error('response without a body');
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const next = async (): Promise<TestSseEvent | undefined> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split('\n').filter((line) => !line.startsWith(':'));
        if (lines.length === 0) continue;
        const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length) ?? 'message';
        const data = lines
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice('data: '.length))
          .join('\n');
        return { event, data: JSON.parse(data) as unknown };
      }
      const { done, value } = await reader.read();
      if (done) {
        if (buffer.trim() !== '') throw new Error(`stream ended inside an event: ${JSON.stringify(buffer)}`);
        return undefined;
      }
      buffer += value;
    }
  };
  return {
    next,
    async rest() {
      const events: TestSseEvent[] = [];
      for (let event = await next(); event; event = await next()) events.push(event);
      return events;
    },
  };
}
