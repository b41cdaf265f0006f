import { readFile } from 'node:fs/promises';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { parse as parseToml, TomlError } from 'smol-toml';
import type { DiscoveryWarning } from './types.js';

/**
 * `json` is strict (what Claude, Cursor and Windsurf accept themselves); `jsonc` allows comments
 * and trailing commas (VS Code, Gemini CLI, and our own file).
 */
export type ConfigFormat = 'json' | 'jsonc' | 'toml';

export type ReadResult = { kind: 'missing' } | { kind: 'ok'; value: unknown } | { kind: 'error'; warning: DiscoveryWarning };

/**
 * Reads and parses one config file. Never throws: a missing file is `missing`, anything else
 * that goes wrong is a warning naming the file (and the position, for syntax errors). Warnings
 * never quote the file's text, because these files hold API keys.
 */
export async function readConfigFile(path: string, format: ConfigFormat): Promise<ReadResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'error', warning: { path, message: `${path}: cannot read file (${code ?? 'error'})` } };
  }
  return format === 'toml' ? parseTomlText(text, path) : parseJsonText(text, path, format === 'jsonc');
}

export function parseJsonText(text: string, path: string, jsonc: boolean): ReadResult {
  const errors: ParseError[] = [];
  const value: unknown = parseJsonc(text, errors, {
    disallowComments: !jsonc,
    allowTrailingComma: jsonc,
    allowEmptyContent: true,
  });
  const first = errors[0];
  if (first === undefined) return { kind: 'ok', value };
  const { line, column } = positionAt(text, first.offset);
  const what = humanise(printParseErrorCode(first.error));
  const label = jsonc ? 'JSONC' : 'JSON';
  return {
    kind: 'error',
    warning: { path, line, column, message: `${path}:${line}:${column}: invalid ${label}: ${what}` },
  };
}

function parseTomlText(text: string, path: string): ReadResult {
  try {
    return { kind: 'ok', value: parseToml(text) };
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    // The message carries a code excerpt after the first line; keep only the reason.
    const reason = (err.message.split('\n')[0] ?? '').replace(/^Invalid TOML document:\s*/, '');
    const { line, column } = err;
    return {
      kind: 'error',
      warning: { path, line, column, message: `${path}:${line}:${column}: invalid TOML: ${reason}` },
    };
  }
}

/** 1-based line and column of a character offset. */
export function positionAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** "CommaExpected" → "comma expected". */
function humanise(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}
