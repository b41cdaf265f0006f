import { describe, expect, it } from 'vitest';
import { changedRestartSettings, restartSettingsOf, restartWarning } from '../../../src/config/restart-settings.js';
import { DaemonSettingsSchema } from '../../../src/config/schema.js';

const PATH = '/home/u/.config/switchboard/config.json';
const settings = (raw: Record<string, unknown>) => restartSettingsOf(PATH, DaemonSettingsSchema.parse(raw));

describe("restart-only settings of Switchboard's own file", () => {
  it('names the settings that changed, never the live ones (servers, enabled/disabled lists)', () => {
    const started = settings({ mcpServers: { a: { command: 'x' } } });
    const now = settings({ port: 8000, host: '127.0.0.2', mcpServers: { b: { command: 'y' } }, disabledServers: ['a'] });
    expect(changedRestartSettings(started, now)).toEqual(['host', 'port']);
    expect(restartWarning(started, now)).toEqual({
      message: `${PATH}: "host", "port" changed; they take effect at the next start (restart Switchboard to apply)`,
      path: PATH,
      provider: 'switchboard',
    });
  });

  it('counts a setting removed from the file as changed back to its default, and says nothing when all match', () => {
    const started = settings({ logLevel: 'debug' });
    expect(restartWarning(started, settings({}))?.message).toContain('"logLevel" changed; it takes effect at the next start');
    expect(restartWarning(started, settings({ logLevel: 'debug', mcpServers: { a: { command: 'x' } } }))).toBeUndefined();
    expect(restartWarning(undefined, settings({ port: 1 }))).toBeUndefined();
  });

  it('keeps digests only: a changed token is named, its value is nowhere', () => {
    const started = settings({ token: 'old-secret-token' });
    const now = settings({ token: 'new-secret-token' });
    expect(JSON.stringify([started, now])).not.toMatch(/secret-token/);
    expect(restartWarning(started, now)?.message).toMatch(/"token" changed/);
  });
});
