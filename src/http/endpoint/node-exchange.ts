import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  PerRequestHTTPServerTransport,
  ProtocolErrorCode,
  type AuthInfo,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type MessageClassification,
  type MessageExtraInfo,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { lazyWebRequest } from './lazy-web-request.js';

/** The SDK's SSE keep-alive interval (its `DEFAULT_SSE_KEEP_ALIVE_MS`, not exported): a comment frame this often. */
export const SSE_KEEP_ALIVE_MS = 15_000;

/**
 * The HTTP status of a JSON-RPC error the SDK's validation ladder raised while the request was
 * being dispatched (before any handler ran), as the SDK's own per-request transport answers it
 * (its `LADDER_ERROR_HTTP_STATUS`, not exported). A handler's error is 200, the JSON-RPC error
 * being the payload, except -32021 (a missing client capability), 400 wherever it comes from.
 */
const LADDER_STATUS: Readonly<Record<number, number>> = {
  [ProtocolErrorCode.ParseError]: 400,
  [ProtocolErrorCode.InvalidRequest]: 400,
  [ProtocolErrorCode.MethodNotFound]: 404,
  [ProtocolErrorCode.UnsupportedProtocolVersion]: 400,
  [ProtocolErrorCode.MissingRequiredClientCapability]: 400,
  [-32020]: 400, // HeaderMismatch
};

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' };

/**
 * One 2026-07-28 request served straight onto Node's `ServerResponse` (issue #44 item 1): the
 * SDK's per-request transport, whose `send` writes the answer itself instead of building a web
 * `Response` for an adapter to read back.
 *
 * It *is* a `PerRequestHTTPServerTransport` (a subclass): connecting a `Server` to it binds the
 * instance to the classified revision exactly as the SDK's own entry does, and the SDK's
 * `Protocol` still validates the envelope, finds the handler and dispatches. What is ours is only
 * the last step, the bytes: a terminal answer with no event before it is one JSON body with its
 * `Content-Length` (status 200, or the ladder's 4xx for an error raised during dispatch, as the SDK
 * answers it); a notification before the answer (progress, a log message) turns the response into
 * an SSE stream (`event: message` frames, a keep-alive comment every 15 s) that ends with the answer.
 *
 * The client going away (the response closes before the answer) closes the transport: the SDK then
 * aborts the handler's work. Closed before an answer while the client is still there (shutdown),
 * it answers 499 with no body, as the SDK's entry does. `serve` resolves once the exchange is over.
 */
export class NodeExchange extends PerRequestHTTPServerTransport {
  readonly #res: ServerResponse;
  readonly #classification: MessageClassification;
  #requestId: JSONRPCRequest['id'] | undefined;
  #dispatching = false;
  #answered = false;
  #streaming = false;
  #done = false;
  #keepAlive: NodeJS.Timeout | undefined;
  #settle: () => void = () => undefined;

  constructor(classification: MessageClassification, res: ServerResponse) {
    super({ classification });
    this.#classification = classification;
    this.#res = res;
  }

  /** Delivers the request to the connected server; resolves once its answer is written or the client left. */
  serve(message: JSONRPCRequest, req: IncomingMessage, authInfo: AuthInfo | undefined): Promise<void> {
    const over = new Promise<void>((resolve) => (this.#settle = resolve));
    this.#requestId = message.id;
    if (this.#res.destroyed) {
      void this.close();
      return over;
    }
    this.#res.once('close', () => {
      if (!this.#answered || this.#streaming) void this.close();
    });
    const extra: MessageExtraInfo = { classification: this.#classification, request: lazyWebRequest(req, this.#res), ...(authInfo ? { authInfo } : {}) };
    this.#dispatching = true;
    try {
      this.onmessage?.(message, extra);
    } finally {
      this.#dispatching = false;
    }
    return over;
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#done) return;
    const isAnswer = isAnswerMessage(message);
    const relatedId = isAnswer ? message.id : options?.relatedRequestId;
    if (relatedId === undefined || relatedId !== this.#requestId) {
      if (isAnswer) this.onerror?.(new Error(`Received a response for an unknown request id: ${String(message.id)}`));
      return;
    }
    if (!isAnswer) {
      this.#frame(message);
      return;
    }
    if (this.#answered) return;
    this.#answered = true;
    if (this.#streaming) {
      this.#frame(message);
      this.#res.end();
    } else {
      const code = 'error' in message ? message.error.code : undefined;
      const ladder = code !== undefined && (this.#dispatching || code === ProtocolErrorCode.MissingRequiredClientCapability) ? LADDER_STATUS[code] : undefined;
      // A string body: Node joins it to the head in one string (a Buffer would go as a part of its own).
      const body = JSON.stringify(message);
      this.#res.writeHead(ladder ?? 200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }).end(body);
    }
    queueMicrotask(() => void this.close());
  }

  override async close(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    if (this.#keepAlive) clearInterval(this.#keepAlive);
    if (this.#streaming && !this.#res.writableEnded) this.#res.end();
    // Closed before any answer (shutdown, or the client gone): the SDK's entry answers 499, no body.
    else if (!this.#answered && !this.#res.headersSent && !this.#res.destroyed) this.#res.writeHead(499).end();
    this.#settle();
    this.onclose?.();
  }

  /** One SSE event; the first turns the response into a stream. */
  #frame(message: JSONRPCMessage): void {
    if (this.#res.writableEnded || this.#res.destroyed) return;
    if (!this.#streaming) {
      this.#streaming = true;
      this.#res.writeHead(200, SSE_HEADERS);
      this.#keepAlive = setInterval(() => this.#res.write(': keepalive\n\n'), SSE_KEEP_ALIVE_MS);
      this.#keepAlive.unref();
    }
    this.#res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
}

/**
 * Whether an outgoing message is an answer (a result or an error) rather than a notification. What
 * `send` gets comes from the SDK's own protocol layer, already well-formed: its shape tells, where
 * the SDK's `isJSONRPCResultResponse` would parse the whole result with zod again (issue #44).
 */
function isAnswerMessage(message: JSONRPCMessage): message is JSONRPCResultResponse | JSONRPCErrorResponse {
  return 'id' in message && ('result' in message || 'error' in message);
}
