import { describe, expect, it } from 'vitest';
import { formatProgress, parseProgress, ProgressLine } from '../../../../src/cli/client/progress-line.js';
import { readEvents, type SseEvent } from '../../../../src/cli/client/sse-parser.js';

/** The CLI's reading of an event stream and its live progress line. */

async function parse(chunks: string[]): Promise<SseEvent[]> {
  const encoder = new TextEncoder();
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const chunk of chunks) yield encoder.encode(chunk);
  }
  const events: SseEvent[] = [];
  for await (const event of readEvents(body())) events.push(event);
  return events;
}

describe('readEvents', () => {
  it('reads events across chunk boundaries, in any line ending, skipping comments', async () => {
    const text = ': stream\n\nevent: progress\ndata: {"progress":1}\n\nevent: result\r\ndata: {"content":[]}\r\n\r\ndata:a\rdata: b\r\r';
    const expected = [
      { event: 'progress', data: '{"progress":1}' },
      { event: 'result', data: '{"content":[]}' },
      { event: 'message', data: 'a\nb' },
    ];
    expect(await parse([text])).toEqual(expected);
    // One character at a time: a CRLF split in two still ends one line, not two.
    expect(await parse([...text])).toEqual(expected);
  });

  it('drops an event the stream ended in the middle of', async () => {
    expect(await parse(['event: result\ndata: {}'])).toEqual([]);
  });
});

describe('the progress line', () => {
  it('formats progress with and without a total and a message', () => {
    expect(formatProgress({ progress: 3, total: 10, message: 'step 3' })).toBe('[3/10] step 3');
    expect(formatProgress({ progress: 3 })).toBe('[3]');
    expect(formatProgress({ progress: 1, message: 'two\nlines\u001b[31m' })).toBe('[1] two lines [31m');
  });

  it('reads only well-formed progress data', () => {
    expect(parseProgress('{"progress":2,"total":4,"message":"x"}')).toEqual({ progress: 2, total: 4, message: 'x' });
    expect(parseProgress('{"progress":"2"}')).toBeUndefined();
    expect(parseProgress('not json')).toBeUndefined();
  });

  it('overwrites one line, stays shorter than the terminal, and clears only what it showed', () => {
    let written = '';
    const line = new ProgressLine({ write: (chunk: string) => (written += chunk), isTTY: true, columns: 10 });
    line.clear();
    expect(written).toBe('');
    line.update({ progress: 1, total: 2, message: 'a long message' });
    line.update({ progress: 2, total: 2 });
    line.clear();
    line.clear();
    expect(written).toBe('\r\u001b[2K[1/2] a l\r\u001b[2K[2/2]\r\u001b[2K');
  });
});
