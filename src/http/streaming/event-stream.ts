import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

const EVENT_STREAM = 'text/event-stream';

/**
 * Whether an `Accept` header asks for an SSE stream: `text/event-stream` is listed with a
 * non-zero quality, at least as high as `application/json`'s. Anything else (no header, `*\/*`,
 * JSON preferred) keeps the plain JSON answer.
 */
export function wantsEventStream(accept: string | undefined): boolean {
  if (accept === undefined || !accept.toLowerCase().includes(EVENT_STREAM)) return false;
  let stream = 0;
  let json = 0;
  for (const range of accept.toLowerCase().split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim());
    const q = qualityOf(params);
    if (type === EVENT_STREAM) stream = Math.max(stream, q);
    else if (type === 'application/json') json = Math.max(json, q);
  }
  return stream > 0 && stream >= json;
}

function qualityOf(params: readonly string[]): number {
  const q = params.find((param) => param.startsWith('q='));
  if (q === undefined) return 1;
  const value = Number(q.slice(2));
  return Number.isFinite(value) ? value : 1;
}

/**
 * A `text/event-stream` response. It is sent through fastify as a stream payload rather than
 * written to a hijacked `reply.raw`: the onSend hooks still run (`Connection: close` while the
 * daemon stops), the request is logged, counted by the drain and closed like any other, and
 * fastify destroys the stream when the client goes away. Each event is one write, which the pipe
 * hands to the socket as it comes (no compression or buffering sits in between).
 */
export class EventStream {
  readonly #body = new PassThrough();

  constructor(reply: FastifyReply) {
    void reply.code(200).type(EVENT_STREAM).header('cache-control', 'no-cache').send(this.#body);
    // A comment line: fastify writes the head with the first chunk, and the client should know
    // at once that it got a stream, not only when the first event comes.
    this.#write(': stream\n\n');
  }

  /** One event; `data` is JSON on a single line (JSON.stringify never emits a raw newline). */
  send(event: string, data: unknown): void {
    this.#write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends the response; idempotent, and a no-op once the client has gone. */
  end(): void {
    if (!this.#body.destroyed && !this.#body.writableEnded) this.#body.end();
  }

  #write(chunk: string): void {
    // After the client went away fastify destroyed the stream: writing would only raise an error.
    if (!this.#body.destroyed && !this.#body.writableEnded) this.#body.write(chunk);
  }
}
