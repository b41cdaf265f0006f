import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fixture OpenAI-compatible embeddings endpoint (issue #37 item 3) on 127.0.0.1:0, over real
 * HTTP: `POST /v1/embeddings {model, input}` → `{data: [{embedding, index}]}`. Its vectors are
 * deterministic and mean something: one dimension per group of words that mean the same
 * (`CONCEPTS`), so "how far along is it" lands on a tool about progress though they share no word.
 */
export const CONCEPTS: readonly (readonly string[])[] = [
  ['progress', 'far', 'along', 'steps', 'percentage'],
  ['log', 'logs', 'journal', 'diary', 'level'],
  ['sampling', 'sample', 'llm', 'model', 'ponder'],
  ['roots', 'folders', 'workspace'],
];

export interface EmbeddingsServer {
  /** The API base to configure (`…/v1`). */
  url: string;
  /** Every request answered, in order. */
  requests: Array<{ model: string; input: string[] }>;
  /** Stops listening and drops open connections (an outage). */
  close(): Promise<void>;
}

/** The fixture's vector of `text`: word counts per concept, and a small constant so none is zero. */
export function conceptVector(text: string): number[] {
  const words = text.toLowerCase().split(/[^a-z]+/);
  return [...CONCEPTS.map((group) => words.filter((word) => group.includes(word)).length), 0.05];
}

export async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const requests: EmbeddingsServer['requests'] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = JSON.parse(await read(req)) as { model: string; input: string | string[] };
      const input = Array.isArray(body.input) ? body.input : [body.input];
      requests.push({ model: body.model, input });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', model: body.model, data: input.map((text, index) => ({ object: 'embedding', index, embedding: conceptVector(text) })) }));
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

async function read(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}
