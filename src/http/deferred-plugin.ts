import type { FastifyInstance, FastifyPluginAsync, FastifyPluginOptions, FastifyReply, FastifyRequest, HTTPMethods, RouteHandlerMethod } from 'fastify';
import { namedPlugin } from './named-plugin.js';

type CloseHook = () => Promise<void> | void;

interface Loaded {
  handler: RouteHandlerMethod;
  preClose: CloseHook[];
  onClose: CloseHook[];
}

/**
 * Registers `route` now and loads the plugin that serves it on the route's first request, so
 * the code behind it (and its dependencies) is compiled only by a daemon that gets such a
 * request. Fastify takes no routes or hooks once listening, so the loaded plugin runs against
 * a narrow facade: `log`, `addHook('preClose' | 'onClose')` and one `route` for this URL. Any
 * other use of the instance throws at load, loudly, in the first test that hits the route.
 */
export function deferredPlugin<O extends FastifyPluginOptions>(route: { url: string; method: HTTPMethods[] }, load: () => Promise<FastifyPluginAsync<O>>): FastifyPluginAsync<O> {
  return namedPlugin<FastifyPluginAsync<O>>(async (app, options) => {
    let loading: Promise<Loaded> | undefined;
    const loaded = (): Promise<Loaded> =>
      (loading ??= (async () => {
        const plugin = await load();
        const found: Partial<Loaded> & Pick<Loaded, 'preClose' | 'onClose'> = { preClose: [], onClose: [] };
        const facade = {
          log: app.log,
          addHook(name: string, hook: CloseHook) {
            if (name !== 'preClose' && name !== 'onClose') throw new Error(`deferred plugin: hook ${name} is not supported`);
            found[name].push(hook);
          },
          route(options: { url: string; handler: RouteHandlerMethod }) {
            if (options.url !== route.url || found.handler) throw new Error(`deferred plugin: unexpected route ${options.url}`);
            found.handler = options.handler;
          },
        };
        const strict = new Proxy(facade, {
          get(target, prop, receiver) {
            if (!Reflect.has(target, prop)) throw new Error(`deferred plugin: app.${String(prop)} is not available`);
            return Reflect.get(target, prop, receiver) as unknown;
          },
        });
        await plugin(strict as unknown as FastifyInstance, options);
        if (!found.handler) throw new Error(`deferred plugin: no route ${route.url} registered`);
        return { handler: found.handler, preClose: found.preClose, onClose: found.onClose };
      })());

    app.route({
      method: route.method,
      url: route.url,
      async handler(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
        const { handler } = await loaded();
        return handler.call(this, request, reply);
      },
    });
    // Nothing to close unless a request loaded it.
    const run = async (which: 'preClose' | 'onClose'): Promise<void> => {
      // A plugin that failed to load has nothing open (its requests were answered with 500).
      const plugin = await loading?.catch(() => undefined);
      for (const hook of plugin?.[which] ?? []) await hook();
    };
    app.addHook('preClose', () => run('preClose'));
    app.addHook('onClose', () => run('onClose'));
  }, `deferred ${route.url}`);
}
