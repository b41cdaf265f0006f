import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { EventStream, wantsEventStream } from '../../../../src/http/streaming/event-stream.js';

/**
 * When a call is answered as SSE (the `Accept` negotiation), and what `EventStream` puts on the
 * wire, read by a real client from a real listener: the head and a comment at once, before any
 * event, then one `event:`/`data:` block per event with its JSON on a single line.
 */

describe('wantsEventStream', () => {
  it('asks for a stream when text/event-stream is listed with a non-zero quality not below JSON', () => {
    expect(wantsEventStream('text/event-stream')).toBe(true);
    expect(wantsEventStream('Text/Event-Stream')).toBe(true);
    expect(wantsEventStream('application/json, text/event-stream')).toBe(true);
    expect(wantsEventStream('application/json;q=0.5, text/event-stream;q=0.9')).toBe(true);
    // A quality that is not a number counts as 1.
    expect(wantsEventStream('application/json;q=0.9, text/event-stream;q=high')).toBe(true);
  });

  it('keeps the JSON answer without a header, for wildcards, when JSON is preferred, at q=0 and for a look-alike type', () => {
    expect(wantsEventStream(undefined)).toBe(false);
    expect(wantsEventStream('*/*')).toBe(false);
    expect(wantsEventStream('application/json')).toBe(false);
    expect(wantsEventStream('text/event-stream;q=0.5, application/json')).toBe(false);
    expect(wantsEventStream('text/event-stream; q=0')).toBe(false);
    expect(wantsEventStream('text/event-streams')).toBe(false);
  });
});

/** A listener whose one route opens a stream, then waits for the test's word before its events. */
async function streamingApp(events: Array<[string, unknown]>): Promise<{ url: string; release: () => void }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // A test that fails before reading its stream to the end must not leave close waiting on the socket.
  const app = Fastify({ forceCloseConnections: true });
  app.get('/stream', async (_request, reply) => {
    const stream = new EventStream(reply);
    await gate;
    for (const [event, data] of events) stream.send(event, data);
    stream.end();
    return reply;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onTestFinished(() => {
    release();
    return app.close();
  });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/stream`, release };
}

describe('EventStream', () => {
  it('sends the head and a comment at once, then each event as one block with single-line JSON, then ends', async () => {
    const { url, release } = await streamingApp([
      ['progress', { progress: 1, total: 2 }],
      ['result', { content: [{ type: 'text', text: 'two\nlines' }] }],
    ]);
    // The route has sent no event yet: this much arrives because of the comment alone.
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    expect((await reader.read()).value).toBe(': stream\n\n');

    release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += chunk.value;
    expect(rest).toBe('event: progress\ndata: {"progress":1,"total":2}\n\n' + 'event: result\ndata: {"content":[{"type":"text","text":"two\\nlines"}]}\n\n');
  });
});
