import type { Output } from '../context.js';

/** Back to the start of the line and erase it (ANSI EL2). */
const CLEAR = '\r\u001b[2K';

export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * One line on a terminal that each update overwrites (`[3/10] step 3`), cleared before anything
 * else is printed. Kept shorter than the terminal is wide: a line that wrapped could no longer be
 * erased with a carriage return.
 */
export class ProgressLine {
  #shown = false;

  constructor(private readonly out: Output) {}

  update(update: ProgressUpdate): void {
    const text = formatProgress(update);
    const width = this.out.columns;
    this.out.write(CLEAR + (width !== undefined && width > 1 && text.length >= width ? text.slice(0, width - 1) : text));
    this.#shown = true;
  }

  /** Erases the line, if one is shown. */
  clear(): void {
    if (!this.#shown) return;
    this.out.write(CLEAR);
    this.#shown = false;
  }
}

/** `[3/10] step 3`; `[3]` without a total, the message only when there is one. */
export function formatProgress({ progress, total, message }: ProgressUpdate): string {
  const counter = total === undefined ? `[${progress}]` : `[${progress}/${total}]`;
  const text = message === undefined ? counter : `${counter} ${message}`;
  // A message is the server's text: one line, and no escape sequences of its own.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}

/** The data of a `progress` event, or undefined when it is not one. */
export function parseProgress(data: string): ProgressUpdate | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  const { progress, total, message } = (value ?? {}) as Record<string, unknown>;
  if (typeof progress !== 'number') return undefined;
  return { progress, ...(typeof total === 'number' ? { total } : {}), ...(typeof message === 'string' ? { message } : {}) };
}
