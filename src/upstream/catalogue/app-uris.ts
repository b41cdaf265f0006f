/**
 * MCP Apps across servers (issue #41): a tool names its interactive view, a `ui://` resource, in
 * its `_meta`, and the host reads that resource. Two servers may both serve
 * `ui://widget/index.html`, so Switchboard shows each server's `ui://` URIs under the server's
 * name — `ui://<server>/<the server's URI after "ui://">` — in resource lists, templates, reads,
 * tool `_meta` and tool results, and maps them back on the way to the server. The exposed form
 * names its server, so mapping back needs no table, and every exposed `ui://` URI is one of ours.
 * Any other URI passes through unchanged (SPEC §7). No I/O, no state.
 */

const UI_PREFIX = 'ui://';

/** The `_meta` keys that point a tool at its view: MCP Apps', its older flat key, OpenAI's Apps SDK's. */
const FLAT_POINTER_KEYS = ['ui/resourceUri', 'openai/outputTemplate'] as const;

/** Whether `uri` is an MCP Apps view (`ui://…`). */
export function isAppUri(uri: string): boolean {
  return uri.startsWith(UI_PREFIX);
}

/** `server`'s own `ui://` URI as Switchboard shows it; any other URI unchanged. */
export function exposeAppUri(server: string, uri: string): string {
  return isAppUri(uri) ? `${UI_PREFIX}${encodeURIComponent(server)}/${uri.slice(UI_PREFIX.length)}` : uri;
}

/** The server and the server's own URI behind an exposed `ui://` URI; undefined for any other URI. */
export function appUriTarget(uri: string): { server: string; uri: string } | undefined {
  if (!isAppUri(uri)) return undefined;
  const rest = uri.slice(UI_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return undefined;
  let server: string;
  try {
    server = decodeURIComponent(rest.slice(0, slash));
  } catch {
    return undefined;
  }
  return { server, uri: `${UI_PREFIX}${rest.slice(slash + 1)}` };
}

/** The URI to send to the server that owns `uri`: its own when `uri` is an exposed view, else `uri`. */
export function upstreamUri(uri: string): string {
  return appUriTarget(uri)?.uri ?? uri;
}

/**
 * A tool's `_meta` with its view pointers (`ui.resourceUri`, `ui/resourceUri`,
 * `openai/outputTemplate`) exposed; everything else in it untouched. The same object when
 * nothing points at a view.
 */
export function exposeToolMeta<T extends Record<string, unknown> | undefined>(server: string, meta: T): T {
  if (!meta) return meta;
  let changed = false;
  const out: Record<string, unknown> = { ...meta };
  const ui = meta.ui as Record<string, unknown> | undefined;
  if (ui && typeof ui === 'object' && typeof ui.resourceUri === 'string' && isAppUri(ui.resourceUri)) {
    out.ui = { ...ui, resourceUri: exposeAppUri(server, ui.resourceUri) };
    changed = true;
  }
  for (const key of FLAT_POINTER_KEYS) {
    const value = meta[key];
    if (typeof value === 'string' && isAppUri(value)) {
      out[key] = exposeAppUri(server, value);
      changed = true;
    }
  }
  return changed ? (out as T) : meta;
}

/** Whether a tool's `_meta` points it at a `ui://` view (an MCP App's tool). */
export function pointsAtView(meta: Record<string, unknown> | undefined): boolean {
  if (!meta) return false;
  const ui = meta.ui as Record<string, unknown> | undefined;
  if (ui && typeof ui === 'object' && typeof ui.resourceUri === 'string' && isAppUri(ui.resourceUri)) return true;
  return FLAT_POINTER_KEYS.some((key) => typeof meta[key] === 'string' && isAppUri(meta[key]));
}

/** A listed resource or template of `server` with its `ui://` URI exposed (`mimeType`, `_meta` untouched). */
export function exposeListed<T extends { uri: string } | { uriTemplate: string }>(server: string, item: T): T {
  if ('uri' in item && isAppUri(item.uri)) return { ...item, uri: exposeAppUri(server, item.uri) };
  if ('uriTemplate' in item && isAppUri(item.uriTemplate)) return { ...item, uriTemplate: exposeAppUri(server, item.uriTemplate) };
  return item;
}

/** A `resources/read` result of `server` with each content's `ui://` URI exposed (text, `mimeType`, `_meta` untouched). */
export function exposeReadResult(server: string, result: Record<string, unknown>): Record<string, unknown> {
  const contents = result.contents;
  if (!Array.isArray(contents) || !contents.some(hasAppUri)) return result;
  return { ...result, contents: contents.map((content: unknown) => (hasAppUri(content) ? { ...content, uri: exposeAppUri(server, content.uri) } : content)) };
}

/**
 * A tool result of `server` with the `ui://` URIs of its `resource_link` and embedded `resource`
 * blocks exposed, so that what the agent is handed reads back through Switchboard.
 */
export function exposeToolResult<T extends { content?: unknown }>(server: string, result: T): T {
  if (!Array.isArray(result.content) || !result.content.some((block) => hasAppUri(block) || hasAppUri((block as { resource?: unknown } | null)?.resource))) return result;
  const content = result.content.map((block: unknown) => {
    if (hasAppUri(block)) return { ...block, uri: exposeAppUri(server, block.uri) };
    const resource = (block as { resource?: unknown }).resource;
    if (hasAppUri(resource)) return { ...(block as object), resource: { ...resource, uri: exposeAppUri(server, resource.uri) } };
    return block;
  });
  return { ...result, content };
}

function hasAppUri(value: unknown): value is { uri: string } {
  return typeof value === 'object' && value !== null && typeof (value as { uri?: unknown }).uri === 'string' && isAppUri((value as { uri: string }).uri);
}
