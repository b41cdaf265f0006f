/** fastify's own key for a plugin's name (`fastify-plugin` sets it from its `name` option). */
const DISPLAY_NAME = Symbol.for('fastify.display-name');

/**
 * Gives `plugin` its name where fastify looks first. A plugin without one is looked up by
 * identity in every entry of `require.cache`, twice per `register`: with ~20 route plugins that
 * was ~6% of the CPU of building and closing a daemon (a test starts hundreds). Returns `plugin`.
 */
export function namedPlugin<T extends (...args: never[]) => unknown>(plugin: T, name: string = plugin.name): T {
  (plugin as T & { [DISPLAY_NAME]?: string })[DISPLAY_NAME] ??= name;
  return plugin;
}
