import Fastify, { type FastifyPluginAsync } from 'fastify';
import { describe, expect, it } from 'vitest';
import { namedPlugin } from '../../../src/http/named-plugin.js';

const DISPLAY_NAME = Symbol.for('fastify.display-name');
const displayName = (plugin: object): unknown => (plugin as Record<symbol, unknown>)[DISPLAY_NAME];

describe('namedPlugin', () => {
  it('gives a plugin its function name under fastify\u2019s display-name key, and returns the plugin itself', () => {
    const healthRoutes: FastifyPluginAsync = async () => {};
    expect(displayName(healthRoutes)).toBeUndefined();
    expect(namedPlugin(healthRoutes)).toBe(healthRoutes);
    expect(displayName(healthRoutes)).toBe('healthRoutes');
  });

  it('names an anonymous plugin as told, and keeps a name it already has', () => {
    const anonymous = ((): FastifyPluginAsync => async () => {})();
    expect(displayName(namedPlugin(anonymous, 'deferred /mcp'))).toBe('deferred /mcp');
    expect(displayName(namedPlugin(anonymous, 'another'))).toBe('deferred /mcp');
  });

  it('is the name fastify gives the plugin\u2019s instance', async () => {
    let seen: string | undefined;
    const anonymous = ((): FastifyPluginAsync => async (app) => {
      seen = app.pluginName;
    })();
    const app = Fastify();
    await app.register(namedPlugin(anonymous, 'my routes'));
    await app.ready();
    expect(seen).toBe('my routes');
    await app.close();
  });
});
