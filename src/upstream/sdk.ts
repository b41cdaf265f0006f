import type * as ClientPackage from '@modelcontextprotocol/client';
import type * as StdioPackage from '@modelcontextprotocol/client/stdio';

/**
 * The MCP SDK client, loaded on first use (issue #44). It is one package of ~1 MB with the
 * protocol's zod schemas built when it is evaluated: compiling and running it took a large share
 * of a `serve` start before `listening`, and a daemon with no HTTP or stdio server to connect (or
 * a CLI client command) never needs it. Every value the upstream side, the gateway and the HTTP
 * edge take from the package comes through here; their other imports of it are types only.
 *
 * The first connect attempt starts the load (`loadSdk()`), so it runs alongside the bind and the
 * children's boot; code that runs only once a connection exists takes it synchronously
 * (`sdk()`). An error can be one of the SDK's classes only once the SDK is loaded, so checks of a
 * caught error use `loadedSdk()` and need not wait.
 */
export type Sdk = typeof ClientPackage & Pick<typeof StdioPackage, 'getDefaultEnvironment'>;

let loading: Promise<Sdk> | undefined;
let loaded: Sdk | undefined;

/** Starts loading the SDK client (once) and resolves with it. */
export function loadSdk(): Promise<Sdk> {
  loading ??= Promise.all([import('@modelcontextprotocol/client'), import('@modelcontextprotocol/client/stdio')]).then(([client, stdio]) => {
    loaded = { ...client, getDefaultEnvironment: stdio.getDefaultEnvironment };
    return loaded;
  });
  return loading;
}

/** The SDK client, for code that runs only after a `loadSdk()` resolved (a connection, the `/mcp` endpoint). */
export function sdk(): Sdk {
  if (!loaded) throw new Error('the MCP SDK client was used before loadSdk() resolved');
  return loaded;
}

/** The SDK client if it is loaded: no value of it (an error, a result) exists before. */
export function loadedSdk(): Sdk | undefined {
  return loaded;
}
