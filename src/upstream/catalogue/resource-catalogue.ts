import type { Resource, ResourceTemplateType as ResourceTemplate, UriTemplate } from '@modelcontextprotocol/client';
import { appUriTarget, exposeListed } from './app-uris.js';
import { compare } from './naming.js';
import { sdk } from '../sdk.js';

/**
 * Resources and resource templates of every server (SPEC §7). URIs pass through unchanged — but
 * for MCP Apps' `ui://` views, shown under their server's name (`app-uris.ts`) — so a read routes
 * by URI: the server that lists it (the first by server name when two do — the collision is
 * reported), else the first whose template matches it, else the server a tool result pointed at
 * it from (`resource_link`); a `ui://` URI goes to the server it names.
 */
export interface UriCollision {
  uri: string;
  /** Sorted by name; the first serves the URI. */
  servers: string[];
}

/** A listed item and the server that serves it. */
export interface Owned<T> {
  server: string;
  item: T;
}

interface ServerResources {
  resources: readonly Resource[];
  templates: readonly ResourceTemplate[];
}

/** How many URIs seen in tool results (`resource_link`) are remembered for routing. */
const MAX_LINKED = 1_000;

export class ResourceCatalogue {
  private readonly servers = new Map<string, ServerResources>();
  private resources: Resource[] = [];
  private templates: ResourceTemplate[] = [];
  private owned: { resources: Array<Owned<Resource>>; templates: Array<Owned<ResourceTemplate>> } = { resources: [], templates: [] };
  private byUri = new Map<string, string>();
  private matchers: Array<{ server: string; template: UriTemplate }> = [];
  private collisionList: UriCollision[] = [];
  private readonly linked = new Map<string, string>();
  private currentVersion = 0;

  get version(): number {
    return this.currentVersion;
  }

  list(): readonly Resource[] {
    return this.resources;
  }

  listTemplates(): readonly ResourceTemplate[] {
    return this.templates;
  }

  /**
   * `list()` and `listTemplates()` with the server of each item, for views that show (or filter
   * by) the owner; a template's text alone does not say which server it came from.
   */
  listOwned(): { resources: ReadonlyArray<Owned<Resource>>; templates: ReadonlyArray<Owned<ResourceTemplate>> } {
    return this.owned;
  }

  collisions(): readonly UriCollision[] {
    return this.collisionList;
  }

  countOf(server: string): number {
    const entry = this.servers.get(server);
    return entry ? entry.resources.length + entry.templates.length : 0;
  }

  /** The server a URI goes to, or undefined when none serves it. */
  route(uri: string): string | undefined {
    // Every `ui://` URI shown is one of ours and names its server: no other server's template takes it.
    const app = appUriTarget(uri);
    if (app) return app.server;
    const listed = this.byUri.get(uri);
    if (listed !== undefined) return listed;
    for (const { server, template } of this.matchers) if (template.match(uri)) return server;
    return this.linked.get(uri);
  }

  /** The server a template (by its `uriTemplate` text) belongs to. */
  templateServer(uriTemplate: string): string | undefined {
    for (const { server, template } of this.matchers) if (template.toString() === uriTemplate) return server;
    return undefined;
  }

  /** A `resource_link` in a tool result of `server`: its URI stays readable through Switchboard. */
  rememberLink(uri: string, server: string): void {
    if (this.byUri.has(uri)) return;
    this.linked.delete(uri);
    this.linked.set(uri, server);
    if (this.linked.size > MAX_LINKED) this.linked.delete(this.linked.keys().next().value as string);
  }

  /**
   * Replaces one server's resources and templates (as the server listed them: its `ui://` URIs
   * are exposed here); returns the URIs that came and went.
   */
  setServer(server: string, listedResources: readonly Resource[], listedTemplates: readonly ResourceTemplate[]): { added: string[]; removed: string[] } {
    const resources = listedResources.map((resource) => exposeListed(server, resource));
    const templates = listedTemplates.map((template) => exposeListed(server, template));
    const before = new Set([...this.byUri.keys(), ...this.matchers.map((m) => m.template.toString())]);
    if (resources.length === 0 && templates.length === 0) this.servers.delete(server);
    else this.servers.set(server, { resources, templates });
    this.rebuild();
    const after = new Set([...this.byUri.keys(), ...this.matchers.map((m) => m.template.toString())]);
    return {
      added: [...after].filter((uri) => !before.has(uri)).sort(),
      removed: [...before].filter((uri) => !after.has(uri)).sort(),
    };
  }

  clear(): void {
    this.servers.clear();
    this.linked.clear();
    this.rebuild();
  }

  private rebuild(): void {
    const names = [...this.servers.keys()].sort(compare);
    const byUri = new Map<string, string>();
    const owners = new Map<string, string[]>();
    const resources: Resource[] = [];
    const templates: ResourceTemplate[] = [];
    const matchers: Array<{ server: string; template: UriTemplate }> = [];
    const owned: ResourceCatalogue['owned'] = { resources: [], templates: [] };
    for (const server of names) {
      const entry = this.servers.get(server) as ServerResources;
      for (const resource of entry.resources) {
        const servers = owners.get(resource.uri);
        if (servers) {
          servers.push(server);
          continue;
        }
        owners.set(resource.uri, [server]);
        byUri.set(resource.uri, server);
        resources.push(resource);
        owned.resources.push({ server, item: resource });
      }
      for (const template of entry.templates) {
        templates.push(template);
        owned.templates.push({ server, item: template });
        try {
          // Templates come from a live connection only, so the SDK client is loaded (../sdk.ts).
          matchers.push({ server, template: new (sdk().UriTemplate)(template.uriTemplate) });
        } catch {
          // A template the RFC 6570 parser refuses is still listed; it just routes nothing.
        }
      }
    }
    this.byUri = byUri;
    this.resources = resources;
    this.templates = templates;
    this.matchers = matchers;
    this.owned = owned;
    this.collisionList = [...owners].filter(([, servers]) => servers.length > 1).map(([uri, servers]) => ({ uri, servers }));
    this.currentVersion += 1;
  }
}
