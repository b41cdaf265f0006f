import { StringDecoder } from 'node:string_decoder';

/** @default 200 */
export const DEFAULT_STDERR_LINES = 200;
/** Longer lines are cut, so one runaway write cannot hold megabytes per server. */
const MAX_LINE_CHARS = 4_096;

/**
 * The last N lines a stdio server wrote to stderr. Shown in server detail and appended to
 * connect and crash errors, where the server's own words are usually the best diagnosis.
 */
export class StderrRing {
  readonly capacity: number;
  readonly #lines: string[] = [];
  readonly #decoder = new StringDecoder('utf8');
  #partial = '';

  constructor(capacity = DEFAULT_STDERR_LINES) {
    this.capacity = capacity;
  }

  /** Feeds raw output; bytes of a multi-byte character split across chunks are kept together. */
  push(chunk: Buffer | string): void {
    const text = this.#partial + (typeof chunk === 'string' ? chunk : this.#decoder.write(chunk));
    const parts = text.split('\n');
    this.#partial = clip(parts.pop() ?? '');
    for (const part of parts) this.#append(part);
  }

  /** Buffered lines, oldest first; an unterminated last line is included. */
  lines(): string[] {
    return this.#partial ? [...this.#lines, this.#partial] : [...this.#lines];
  }

  /** The last `n` lines joined with newlines ('' when nothing was written). */
  tail(n = 10): string {
    return n > 0 ? this.lines().slice(-n).join('\n') : '';
  }

  #append(line: string): void {
    this.#lines.push(clip(line.replace(/\r$/, '')));
    if (this.#lines.length > this.capacity) this.#lines.splice(0, this.#lines.length - this.capacity);
  }
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}
