import { describe, expect, it } from 'vitest';
import { renderStatus } from '../../../../src/cli/client/status.js';

describe('switchboard status: warnings', () => {
  it("prints each warning's path once, whether or not the message starts with it", () => {
    const text = renderStatus({
      state: 'ready',
      servers: [],
      discovery: {
        warnings: [
          { path: '/h/.cursor/mcp.json', message: '/h/.cursor/mcp.json: server "x": unknown key "comand" ignored', server: 'x' },
          { path: '/h/.gemini/settings.json', line: 3, column: 7, message: '/h/.gemini/settings.json:3:7: invalid JSON: CloseBraceExpected' },
          { path: '/h/.codex/config.toml', message: 'cannot read file (EACCES)' },
          { message: 'Codex: provider failed: boom' },
        ],
      },
    });
    expect(text.split('\n').slice(-5)).toEqual([
      'Warnings:',
      '  /h/.cursor/mcp.json: server "x": unknown key "comand" ignored',
      '  /h/.gemini/settings.json:3:7: invalid JSON: CloseBraceExpected',
      '  /h/.codex/config.toml: cannot read file (EACCES)',
      '  Codex: provider failed: boom',
    ]);
  });
});
