import { StringDecoder } from 'node:string_decoder';

/** @default 200 */
export const DEFAULT_STDERR_LINES = 200;
/** Longer lines are cut, so one runaway write cannot hold megabytes per server. */
const MAX_LINE_CHARS = 4_096;

/** `stderr`: what a stdio server wrote; `log`: MCP log messages (`notifications/message`). */
export type ServerLogStream = 'stderr' | 'log';
export type ServerLogListener = (lines: string[], stream: ServerLogStream) => void;

/**
 * The last N lines a stdio server wrote to stderr, and the log messages any server sent (as
 * `[log <level>] …` lines). Shown in server detail and appended to connect and crash errors,
 * where the server's own words are usually the best diagnosis; `onLines` feeds `logs --follow`.
 */
export class StderrRing {
  readonly capacity: number;
  readonly #lines: string[] = [];
  readonly #decoder = new StringDecoder('utf8');
  readonly #listeners = new Set<ServerLogListener>();
  readonly #mask: (line: string) => string;
  #partial = '';

  /**
   * `mask` is applied to every line before it is kept or passed on: the server's own secrets
   * (its env and header values) must not reach errors, `/servers/:name` or the log (SPEC §11).
   */
  constructor(capacity = DEFAULT_STDERR_LINES, mask: (line: string) => string = (line) => line) {
    this.capacity = capacity;
    this.#mask = mask;
  }

  /** Feeds raw output; bytes of a multi-byte character split across chunks are kept together. */
  push(chunk: Buffer | string): void {
    const text = this.#partial + (typeof chunk === 'string' ? chunk : this.#decoder.write(chunk));
    const parts = text.split('\n');
    this.#partial = clip(parts.pop() ?? '');
    const lines = parts.map((part) => clip(this.#mask(part.replace(/\r$/, ''))));
    for (const line of lines) this.#append(line);
    if (lines.length > 0) this.#notify(lines, 'stderr');
  }

  /** Adds one log message the server sent, already formatted as a line. */
  pushLog(line: string): void {
    const lines = line.split('\n').map((part) => clip(this.#mask(part)));
    for (const item of lines) this.#append(item);
    this.#notify(lines, 'log');
  }

  /** Called with every complete line from now on. Returns the unsubscribe function. */
  onLines(listener: ServerLogListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Buffered lines, oldest first; an unterminated last line is included. */
  lines(): string[] {
    return this.#partial ? [...this.#lines, this.#mask(this.#partial)] : [...this.#lines];
  }

  /** The last `n` lines joined with newlines ('' when nothing was written). */
  tail(n = 10): string {
    return n > 0 ? this.lines().slice(-n).join('\n') : '';
  }

  #append(line: string): void {
    this.#lines.push(line);
    if (this.#lines.length > this.capacity) this.#lines.splice(0, this.#lines.length - this.capacity);
  }

  #notify(lines: string[], stream: ServerLogStream): void {
    for (const listener of this.#listeners) {
      try {
        listener(lines, stream);
      } catch {
        // A listener's bug must not lose the server's output for everyone else.
      }
    }
  }
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}
