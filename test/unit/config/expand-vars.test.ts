import { describe, expect, it } from 'vitest';
import { expandEntryStrings, expandVars, predefinedVars } from '../../../src/config/expand-vars.js';
import { unresolvedPlaceholders } from '../../../src/config/placeholders.js';

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

  it('expands the VS Code / Cursor editor variables, which win over the environment', () => {
    const editor = { predefined: predefinedVars('/work/proj', '/home/me') };
    const vars = { workspaceFolder: '/not/this' };
    expect(expandVars('${workspaceFolder}/src', vars, editor)).toBe('/work/proj/src');
    expect(expandVars('${workspaceFolderBasename}', vars, editor)).toBe('proj');
    expect(expandVars('${userHome}${pathSeparator}x${/}y', vars, editor)).toBe('/home/me/x/y');
    // Without the editor variables they are unknown, and stay as written.
    expect(expandVars('${userHome}', {}, {})).toBe('${userHome}');
  });

  it('expands bare $VAR only when asked (Gemini CLI), and only when it is set', () => {
    expect(expandVars('$TOKEN and $MISSING and ${TOKEN}', env, { bareDollar: true })).toBe('abc and $MISSING and abc');
    expect(expandVars('$TOKEN', env)).toBe('$TOKEN');
  });

  it('never finds Object.prototype members as variables', () => {
    expect(expandVars('${constructor}/${toString}', {}, { predefined: {} })).toBe('${constructor}/${toString}');
  });
});

describe('unresolvedPlaceholders', () => {
  it('names the field and key of every placeholder left, but lets ${cmd: …} through in env and headers', () => {
    expect(
      unresolvedPlaceholders({
        command: 'srv',
        args: ['--token', '${input:token}'],
        env: { A: '${MISSING}', B: '${cmd: op read x}', C: 'plain' },
        headers: { Authorization: 'Bearer ${cmd: pass show t}' },
        url: 'https://x/${config:foo}',
        cwd: '${cmd: pwd}',
      }),
    ).toEqual([
      'unresolved placeholder ${input:token} (an editor prompt; a daemon cannot answer it) in args.1',
      'unresolved placeholder ${cmd: …} (works in env and headers values only) in cwd',
      'unresolved placeholder ${config:foo} in url',
      'unresolved placeholder ${MISSING} (variable not set) in env.A',
    ]);
    expect(unresolvedPlaceholders({ command: 'srv', env: { A: 'x' } })).toEqual([]);
  });
});
