import type { ServerConfig } from '../../config/types.js';
import { configHash } from '../../config/config-hash.js';
import { resolveTransportKind } from '../../config/validate.js';

/**
 * What a sign-in depends on: the endpoint and the OAuth settings. Not the whole config hash —
 * a changed timeout must not cost a person a new sign-in. Nor the secret and the private key:
 * they are credentials, not identity, and a `!cmd` one is known resolved on connect but not
 * where `login` and `logout` read the config, which must name the same sign-in.
 */
export function authHashOf(config: ServerConfig): string {
  const { clientSecret: _secret, privateKeyJwt: _key, assertion: _assertion, ...oauth } = config.oauth ?? {};
  return configHash({ url: config.url, type: resolveTransportKind(config), ...(config.oauth ? { oauth } : {}) } as ServerConfig);
}
