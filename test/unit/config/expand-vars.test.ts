import { describe, expect, it } from 'vitest';
import { expandEntryStrings, expandVars } from '../../../src/config/expand-vars.js';

describe('expandVars', () => {
  const env = { HOME: '/home/me', EMPTY: '', TOKEN: 'abc' };

  it('expands ${VAR}', () => {
    expect(expandVars('${HOME}/bin', env)).toBe('/home/me/bin');
    expect(expandVars('Bearer ${TOKEN}', env)).toBe('Bearer abc');
  });

  it('uses the default of ${VAR:-default} when unset or empty, else the value', () => {
    expect(expandVars('${MISSING:-fallback}', env)).toBe('fallback');
    expect(expandVars('${EMPTY:-fallback}', env)).toBe('fallback');
    expect(expandVars('${TOKEN:-fallback}', env)).toBe('abc');
    expect(expandVars('${MISSING:-}', env)).toBe('');
  });

  it('leaves an unresolved placeholder as written', () => {
    expect(expandVars('key=${MISSING}', env)).toBe('key=${MISSING}');
    expect(expandVars('${input:token}', env)).toBe('${input:token}');
  });

  it('accepts the ${env:VAR} spelling of VS Code and Windsurf', () => {
    expect(expandVars('${env:TOKEN}', env)).toBe('abc');
  });

  it('expands the string fields of an entry without touching others', () => {
    const entry = {
      command: '${HOME}/x',
      args: ['--t', '${TOKEN}', 3],
      env: { A: '${TOKEN}', B: 1 },
      headers: { H: 'Bearer ${TOKEN}' },
      url: 'https://e.com/${MISSING:-mcp}',
      cwd: '${HOME}',
      timeout: 5,
    };
    expect(expandEntryStrings(entry, env)).toEqual({
      command: '/home/me/x',
      args: ['--t', 'abc', 3],
      env: { A: 'abc', B: 1 },
      headers: { H: 'Bearer abc' },
      url: 'https://e.com/mcp',
      cwd: '/home/me',
      timeout: 5,
    });
    expect(entry.command).toBe('${HOME}/x');
  });
});
