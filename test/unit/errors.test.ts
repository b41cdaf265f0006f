import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ERROR_CATALOGUE, SwitchboardError, type ErrorCode } from '../../src/errors.js';

/** The error catalogue is public API: it must match what openapi.yaml documents, both ways. */

interface ErrorCodeSchema {
  enum: string[];
  'x-status': Record<string, number>;
}

const spec = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  components: { schemas: { ErrorCode: ErrorCodeSchema } };
};
const documented = spec.components.schemas.ErrorCode;
const catalogue = Object.entries(ERROR_CATALOGUE) as Array<[ErrorCode, { status: number; message: string }]>;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every `.ts` file under `dir`, as `[path relative to the repository, text]`. */
function sources(dir: string): Array<[string, string]> {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return [relative(ROOT, path), readFileSync(path, 'utf8')];
    });
}

/**
 * The codes a file uses as a value: quoted (`'SERVER_CLOSED'`), and not only compared with
 * (`=== 'X'`, `case 'X':`, `isSwitchboardError(err, 'X')`) — a code that is only ever checked
 * for is never emitted.
 */
function codesUsed(text: string): Set<string> {
  const used = new Set<string>();
  for (const match of text.matchAll(/(['"])([A-Z][A-Z0-9_]+)\1/g)) {
    const before = text.slice(text.lastIndexOf('\n', match.index) + 1, match.index);
    if (/(?:[!=]==|\bcase)\s*$/.test(before) || /isSwitchboardError\([^()]*,\s*$/.test(before)) continue;
    used.add(match[2] as string);
  }
  return used;
}

describe('error catalogue', () => {
  it('has every code documented in openapi.yaml, and nothing else documented', () => {
    expect([...documented.enum].sort()).toEqual(Object.keys(ERROR_CATALOGUE).sort());
    expect(new Set(documented.enum).size).toBe(documented.enum.length);
  });

  it('documents each code with its catalogue status', () => {
    expect(documented['x-status']).toEqual(Object.fromEntries(catalogue.map(([code, { status }]) => [code, status])));
  });

  it('uses SCREAMING_SNAKE codes, error statuses and real messages', () => {
    for (const [code, { status, message }] of catalogue) {
      expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      expect(Number.isInteger(status), code).toBe(true);
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
      expect(message.trim().length, code).toBeGreaterThan(0);
    }
  });

  it('gives families the statuses clients expect', () => {
    for (const [code, { status }] of catalogue) {
      if (code.endsWith('_NOT_FOUND')) expect(status, code).toBe(404);
      if (code.endsWith('_TIMEOUT')) expect(status, code).toBe(504);
    }
    expect(ERROR_CATALOGUE.VALIDATION_FAILED.status).toBe(400);
    expect(ERROR_CATALOGUE.UNAUTHORIZED.status).toBe(401);
    expect(ERROR_CATALOGUE.PAYLOAD_TOO_LARGE.status).toBe(413);
    expect(ERROR_CATALOGUE.UNSUPPORTED_MEDIA_TYPE.status).toBe(415);
    expect(ERROR_CATALOGUE.INTERNAL_ERROR.status).toBe(500);
    expect(ERROR_CATALOGUE.NOT_READY.status).toBe(503);
    expect(ERROR_CATALOGUE.SHUTTING_DOWN.status).toBe(503);
  });

  it('builds errors that carry code, status and the default or given message', () => {
    const cause = new Error('root');
    const plain = new SwitchboardError('TOOL_NOT_FOUND');
    const custom = new SwitchboardError('SERVER_NOT_FOUND', 'No server named "x"', { cause });
    expect(plain).toMatchObject({ code: 'TOOL_NOT_FOUND', status: 404, message: ERROR_CATALOGUE.TOOL_NOT_FOUND.message });
    expect(custom).toMatchObject({ code: 'SERVER_NOT_FOUND', status: 404, message: 'No server named "x"', cause });
  });

  // A code nobody emits, or no test drives, is a promise the daemon does not keep.
  it('has every code emitted somewhere in src (outside the catalogue)', () => {
    const used = new Set(
      sources('src')
        .filter(([path]) => path !== join('src', 'errors.ts'))
        .flatMap(([, text]) => [...codesUsed(text)]),
    );
    expect(catalogue.map(([code]) => code).filter((code) => !used.has(code))).toEqual([]);
  });

  it('has every code named by some test other than this one', () => {
    const self = relative(ROOT, fileURLToPath(import.meta.url));
    const used = new Set(
      sources('test')
        .filter(([path]) => path !== self)
        .flatMap(([, text]) => [...codesUsed(text)]),
    );
    expect(catalogue.map(([code]) => code).filter((code) => !used.has(code))).toEqual([]);
  });
});
