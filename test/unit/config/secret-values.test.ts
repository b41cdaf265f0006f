import { describe, expect, it } from 'vitest';
import { SecretValues } from '../../../src/config/secret-values.js';

describe('SecretValues', () => {
  it('maskText masks env and header values (longest first), bearer tokens and key shapes; short values stay', () => {
    const secrets = new SecretValues(['operator-token-1']);
    secrets.remember('s', { env: { API_KEY: 'sk-abc-123456', DEBUG: '1' }, headers: { Authorization: 'Bearer tok-9876543' } });
    expect(secrets.maskText('key sk-abc-123456, bearer tok-9876543, op operator-token-1, debug 1')).toBe('key ****, bearer ****, op ****, debug 1');
    expect(secrets.maskText(`agent sbk_${'a'.repeat(24)} said so`)).toBe('agent **** said so');
  });

  it('maskText takes a value as written, maskJson as JSON escapes it', () => {
    const secrets = new SecretValues();
    secrets.remember('s', { env: { PASS: 'p"q\\r-secret' } });
    expect(secrets.maskText('pass p"q\\r-secret')).toBe('pass ****');
    expect(secrets.maskJson(JSON.stringify({ pass: 'p"q\\r-secret' }))).toBe('{"pass":"****"}');
  });

  it("forgets a server's old values when it is remembered again", () => {
    const secrets = new SecretValues();
    secrets.remember('s', { env: { KEY: 'first-secret' } });
    expect(secrets.maskText('first-secret')).toBe('****');
    secrets.remember('s', { env: { KEY: 'second-secret' } });
    expect(secrets.maskText('first-secret second-secret')).toBe('first-secret ****');
  });
});
