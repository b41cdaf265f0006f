/** Anything text can be written to: `process.stdout`, or a buffer in tests. */
export interface Output {
  write(chunk: string): unknown;
  /** True on a terminal (as on `process.stderr`): live output such as a progress line is fine. */
  isTTY?: boolean;
  /** The terminal's width, when it is one. */
  columns?: number;
}

/**
 * Everything a CLI command reads from its process, passed in so a test can run the command
 * in-process against a temporary home.
 */
export interface CliContext {
  /** The arguments after the command name. */
  argv: string[];
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
  stdout: Output;
  stderr: Output;
  /** @default process.platform */
  platform?: NodeJS.Platform;
}

export const EXIT_OK = 0;
export const EXIT_USAGE = 2;

/** Messages may carry newlines (parse errors, zod lists); the CLI promises one line. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
