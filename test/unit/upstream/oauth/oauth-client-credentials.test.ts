import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OAuthSettingsSchema } from '../../../../src/config/schema.js';
import { createValueResolver } from '../../../../src/config/resolve-values.js';
import { authHashOf } from '../../../../src/upstream/oauth/auth-hash.js';
import { loadAssertionKey } from '../../../../src/upstream/oauth/client-credentials.js';
import { tempDir } from '../../../helpers/process.js';

/** The config and key handling of the unattended sign-in (issue #29 item 1). */

const SOURCE = { provider: 'test', providerName: 'Test', path: '/t/mcp.json', level: 'native' as const };

describe('oauth settings for client credentials', () => {
  const issues = (oauth: unknown): string[] => {
    const result = OAuthSettingsSchema.safeParse(oauth);
    return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('needs a client id and exactly one of a secret and a private key', () => {
    expect(issues({ grant: 'client_credentials', clientId: 'svc', clientSecret: 's' })).toEqual([]);
    expect(issues({ grant: 'client_credentials', clientId: 'svc', privateKeyJwt: '/k.pem', signingAlgorithm: 'ES256' })).toEqual([]);
    expect(issues({ grant: 'client_credentials', clientSecret: 's' })).toContain('clientId: grant "client_credentials" needs clientId');
    expect(issues({ grant: 'client_credentials', clientId: 'svc' })).toContain('clientSecret: grant "client_credentials" needs exactly one of clientSecret and privateKeyJwt');
    expect(issues({ grant: 'client_credentials', clientId: 'svc', clientSecret: 's', privateKeyJwt: '/k' })).toHaveLength(1);
  });

  it('the JWT-bearer grant needs a client id and an assertion, and only it takes one', () => {
    expect(issues({ grant: 'jwt_bearer', clientId: 'wl', assertion: '/var/run/secrets/token' })).toEqual([]);
    expect(issues({ grant: 'jwt_bearer', clientId: 'wl' })).toContain('assertion: grant "jwt_bearer" needs assertion');
    expect(issues({ grant: 'client_credentials', clientId: 'svc', clientSecret: 's', assertion: 'x' })).toContain('assertion: assertion needs grant "jwt_bearer"');
  });

  it('keeps keys that mean nothing for the grant out', () => {
    expect(issues({ clientId: 'x', privateKeyJwt: '/k.pem' })).toContain('privateKeyJwt: privateKeyJwt needs grant "client_credentials"');
    expect(issues({ grant: 'client_credentials', clientId: 'svc', privateKeyJwt: '/k', tokenEndpointAuthMethod: 'client_secret_post' })).toContain(
      'tokenEndpointAuthMethod: tokenEndpointAuthMethod needs clientSecret',
    );
    expect(issues({ grant: 'password', clientId: 'x' })).toHaveLength(1);
  });

  it('hashes the sign-in without its secret or key: a !cmd resolved on connect names the same sign-in as the config', () => {
    const base = { url: 'https://mcp.example/mcp', oauth: { grant: 'client_credentials' as const, clientId: 'svc' } };
    expect(authHashOf({ ...base, oauth: { ...base.oauth, clientSecret: '!pass show x' } })).toBe(authHashOf({ ...base, oauth: { ...base.oauth, clientSecret: 'resolved' } }));
    expect(authHashOf({ ...base, oauth: { ...base.oauth, clientId: 'other' } })).not.toBe(authHashOf(base));
  });

  it('resolves !cmd in the secret and the key like env and header values, and drops a failing one with a warning that names only the key', async () => {
    const resolver = createValueResolver();
    const { config, dropped, warnings } = await resolver.resolve(
      'm2m',
      { url: 'https://mcp.example/mcp', oauth: { grant: 'client_credentials', clientId: 'svc', clientSecret: '!printf %s top-secret', privateKeyJwt: '!exit 3' } },
      SOURCE,
    );
    expect(config.oauth?.clientSecret).toBe('top-secret');
    expect(config.oauth?.privateKeyJwt).toBeUndefined();
    expect(dropped).toEqual(['oauth.privateKeyJwt']);
    expect(warnings.join('\n')).toContain('oauth.privateKeyJwt');
    expect(warnings.join('\n')).not.toContain('top-secret');
  });
});

describe('the client assertion key', () => {
  it('reads PEM (PKCS#8, PKCS#1, SEC1) or JWK, from a file or as given, and takes the algorithm from the key', async () => {
    const dir = await tempDir();
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const ed = generateKeyPairSync('ed25519').privateKey;
    const sec1 = join(dir, 'ec.pem');
    await writeFile(sec1, ec.export({ type: 'sec1', format: 'pem' }));
    expect((await loadAssertionKey(sec1, 's')).alg).toBe('ES384');
    expect((await loadAssertionKey(rsa.export({ type: 'pkcs1', format: 'pem' }) as string, 's')).alg).toBe('RS256');
    expect((await loadAssertionKey(JSON.stringify(ed.export({ format: 'jwk' })), 's')).alg).toBe('EdDSA');
    expect((await loadAssertionKey(rsa.export({ type: 'pkcs8', format: 'pem' }) as string, 's', 'PS256')).alg).toBe('PS256');
  });

  it('fails with a message that names the server and never the key', async () => {
    await expect(loadAssertionKey('/no/such/key.pem', 'm2m')).rejects.toThrow('the oauth.privateKeyJwt key of MCP server "m2m" could not be read from its file (ENOENT)');
    const garbage = '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ1dC1ub3QtYS1rZXk=\n-----END PRIVATE KEY-----';
    const err = (await loadAssertionKey(garbage, 'm2m').catch((e: unknown) => e)) as Error;
    expect(err.message).toBe('the oauth.privateKeyJwt key of MCP server "m2m" is not a private key (PEM or JWK)');
    expect(err.message).not.toContain('c2VjcmV0');
  });
});
