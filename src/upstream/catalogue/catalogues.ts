import type { Prompt, Resource, ResourceTemplateType as ResourceTemplate, Tool } from '@modelcontextprotocol/client';
import type { ServerConfig, ServerSource } from '../../config/types.js';
import { SwitchboardError } from '../../errors.js';
import type { ListHints } from '../../store/tool-cache-store.js';
import type { DaemonEvent, ToolsChangedCause } from '../../events/daemon-events.js';
import { parseInstanceAd, withoutOwnTools, type InstanceAd } from '../instance.js';
import type { ToolListing } from '../transport/list-tools.js';
import type { OtherLists } from '../transport/other-lists.js';
import { PromptCatalogue } from './prompt-bridge.js';
import { ResourceCatalogue } from './resource-catalogue.js';
import { ToolCatalogue } from './tool-catalogue.js';
import { filterTools } from './tool-filter.js';
import { exposedToolName } from './tool-bridge.js';
import { ToolPins, type HeldTool } from './tool-pins.js';

/** Who a server is, as far as its share of the catalogues goes. */
export interface ShareOwner {
  readonly name: string;
  readonly config: ServerConfig;
  readonly source: ServerSource;
}

/** One server's share of the catalogues: its last known lists and their marks. */
export interface ServerShare {
  /** The tools served: `listed` less the held ones. */
  tools: Tool[];
  /** The tools as listed (filtered), held ones included: what an approval serves from. */
  listed: Tool[];
  /** Tools whose definition changed after they were served: not listed, calls refused (issue #22). */
  held: HeldTool[];
  /** Served from the cache (or kept for a sign-in) until the server answers. */
  deferred: boolean;
  /** Last known tools of a server that is gone for now. */
  stale: boolean;
  prompts: Prompt[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  /** Caching hints (modern era) of the last tool list. */
  hints: ListHints | undefined;
  /** The Switchboard instance tree the server advertised, when it is one. */
  instance: InstanceAd | undefined;
}

function emptyShare(): ServerShare {
  return { tools: [], listed: [], held: [], deferred: false, stale: false, prompts: [], resources: [], resourceTemplates: [], hints: undefined, instance: undefined };
}

/**
 * The aggregate of every kind — tools, prompts, resources — and the one place each server's
 * share of it changes, emitting what changed (SPEC §7, §9). Per kind one catalogue, fed the
 * same way; the upstream keeps its last known lists, this keeps the aggregate views.
 */
export class Catalogues {
  readonly tools = new ToolCatalogue();
  readonly prompts = new PromptCatalogue();
  readonly resources = new ResourceCatalogue();
  /** Each server's share, kept across its upstreams (a reload keeps the last known tools). */
  private readonly shares = new Map<string, ServerShare>();

  constructor(
    private readonly emit: (event: DaemonEvent) => void,
    private readonly selfId: () => string,
    /**
     * A server said a list changed (`list_changed`) and it was listed again: agents are told so
     * even when nothing visible changed — a direct connection would have told them too.
     */
    private readonly announce: (kind: 'tools' | 'prompts' | 'resources') => void = () => {},
    /** Tool pinning (issue #22). @default pins kept in memory, mode `changes` */
    readonly pins: ToolPins = new ToolPins(),
  ) {}

  /** One server's share (an empty one for a server never listed). */
  shareOf(server: string): Readonly<ServerShare> {
    return this.shares.get(server) ?? emptyShare();
  }

  /** Every server's share. */
  allShares(): IterableIterator<Readonly<ServerShare>> {
    return this.shares.values();
  }

  private share(server: string): ServerShare {
    let share = this.shares.get(server);
    if (!share) this.shares.set(server, (share = emptyShare()));
    return share;
  }

  /** A fresh tool listing: its tools live, its caching hints and instance tree kept. */
  listed(upstream: ShareOwner, listing: ToolListing, cause: ToolsChangedCause): void {
    const share = this.share(upstream.name);
    share.instance = parseInstanceAd(listing.meta);
    share.hints = listing.hints;
    this.setTools(upstream, listing.tools, { cause, deferred: false, stale: false });
  }

  /** Cached tools served while the server is still connecting. */
  servedFromCache(upstream: ShareOwner, tools: Tool[], hints: ListHints | undefined, cause: ToolsChangedCause): void {
    this.share(upstream.name).hints = hints;
    this.setTools(upstream, tools, { cause, deferred: true, stale: false });
  }

  /** The connection is gone: the last known tools stay, marked stale (SPEC §6). */
  markStale(upstream: ShareOwner): void {
    const { tools, listed } = this.shareOf(upstream.name);
    this.setTools(upstream, listed, { cause: 'reconnect', deferred: false, stale: tools.length > 0 });
  }

  /** Waiting for a sign-in: the last known tools, else `cached`, stay listed as deferred. */
  holdForSignIn(upstream: ShareOwner, cause: ToolsChangedCause, cached: Tool[] | undefined): void {
    const known = this.shareOf(upstream.name).listed;
    const tools = known.length > 0 ? known : (cached ?? []);
    this.setTools(upstream, tools, { cause, deferred: tools.length > 0, stale: false });
  }

  /**
   * Replaces one server's tools and emits the change: names that came or went (for this server
   * and for any other whose tool a new collision renamed), a deferred → live switch, or new
   * definitions under the same names. Marking the list stale, or live again after a reconnect
   * that brought the same tools, changes no tool and emits nothing (SPEC §6).
   */
  setTools(upstream: ShareOwner, listed: Tool[], flags: { cause: ToolsChangedCause; deferred: boolean; stale: boolean }): void {
    // A tool that passed through this daemon before (a loop not yet broken) never comes back, and
    // a tool the config filters out (includeTools / excludeTools) is never exposed.
    const share = this.share(upstream.name);
    // Already filtered when it is the share's own list (marked stale, kept for a sign-in, approved).
    let raw = listed === share.listed ? listed : filterTools(withoutOwnTools(listed, this.selfId()), upstream.config);
    // The same definitions again (a re-list, a reconnect): the known objects, whose pin hashes are known.
    if (raw !== share.listed && sameDefinitions(share.listed, raw)) raw = share.listed;
    const { served: tools, held } = this.pins.split(upstream.name, raw, {
      mode: upstream.config.pinTools,
      exposedName: (name) => exposedToolName(upstream.name, name, upstream.config.toolPrefix),
      previous: share.held,
      pinNew: !flags.deferred,
    });
    const newlyHeld = held.filter((entry) => !share.held.includes(entry));
    share.listed = raw;
    share.held = held;
    const deferredChanged = share.deferred !== flags.deferred;
    const redefined = tools !== share.tools && flags.cause !== 'disconnect' && !sameDefinitions(share.tools, tools);
    share.tools = tools;
    share.deferred = flags.deferred;
    share.stale = flags.stale;
    if (flags.cause === 'list_changed') this.announce('tools');
    const diffs = this.tools.setServer(upstream.name, upstream.source.providerName, tools, {
      deferred: flags.deferred,
      stale: flags.stale,
      prefix: upstream.config.toolPrefix,
    });
    for (const [server, { added, removed }] of diffs) {
      const other = server !== upstream.name ? this.shares.get(server) : undefined;
      const namesChanged = added.length > 0 || removed.length > 0;
      if (!namesChanged && (other || !(deferredChanged || redefined))) continue;
      this.emit({
        type: 'tools.changed',
        server,
        added,
        removed,
        toolCount: (other ?? share).tools.length,
        cause: flags.cause,
        deferred: (other ?? share).deferred,
      });
    }
    if (newlyHeld.length > 0) {
      const tools = newlyHeld.map(({ view }) => ({ name: view.name, exposedName: view.exposedName, changed: view.changed }));
      this.emit({ type: 'tools.held', server: upstream.name, tools, heldCount: held.length });
    }
  }

  /**
   * Serves the new definitions of the held tools named (every held tool when `names` is
   * undefined) and pins them. Returns the names approved; a name not held is `TOOL_NOT_FOUND`.
   * `follows`: the replica whose approval this applies (daemon-events.ts `Follows`).
   */
  approve(upstream: ShareOwner, names: readonly string[] | undefined, hashes?: Readonly<Record<string, string>>, follows?: string): string[] {
    const share = this.share(upstream.name);
    const unknown = names?.filter((name) => !share.held.some((h) => h.tool.name === name)) ?? [];
    if (unknown.length > 0) throw new SwitchboardError('TOOL_NOT_FOUND', `Server "${upstream.name}" holds no tool named ${unknown.map((n) => `"${n}"`).join(', ')}`);
    const chosen = names === undefined ? share.held : share.held.filter((h) => names.includes(h.tool.name));
    // What the operator reviewed must still be what is held; nothing is approved otherwise.
    const moved = chosen.filter((h) => hashes?.[h.tool.name] !== undefined && hashes[h.tool.name] !== h.hash);
    if (moved.length > 0) {
      throw new SwitchboardError(
        'TOOL_CHANGED',
        `The held definition of ${moved.map((h) => `"${h.tool.name}"`).join(', ')} changed again since it was shown; review it again (switchboard status ${upstream.name})`,
      );
    }
    if (chosen.length === 0) return [];
    this.pins.approve(upstream.name, chosen, follows);
    this.setTools(upstream, share.listed, { cause: 'approve', deferred: share.deferred, stale: share.stale });
    return chosen.map((h) => h.tool.name);
  }

  /** The held tool that would be served as `exposedName`, with its server; for `TOOL_CHANGED`. */
  heldTool(exposedName: string): { server: string; held: HeldTool } | undefined {
    for (const [server, share] of this.shares) {
      const held = share.held.find((h) => h.view.exposedName === exposedName);
      if (held) return { server, held };
    }
    return undefined;
  }

  /** Replaces the kinds given in `lists` of one server (prompts; resources and templates). */
  setOthers(upstream: ShareOwner, lists: Partial<OtherLists>, cause: ToolsChangedCause): void {
    if (cause === 'list_changed') {
      if (lists.prompts) this.announce('prompts');
      if (lists.resources || lists.resourceTemplates) this.announce('resources');
    }
    const share = this.share(upstream.name);
    if (lists.prompts) {
      const redefined = !sameDefinitions(share.prompts, lists.prompts);
      share.prompts = lists.prompts;
      const diffs = this.prompts.setServer(upstream.name, upstream.source.providerName, lists.prompts, {
        deferred: false,
        stale: false,
        prefix: upstream.config.toolPrefix,
      });
      for (const [server, { added, removed }] of diffs) {
        const owner = server === upstream.name ? share : this.shares.get(server);
        if (added.length === 0 && removed.length === 0 && (server !== upstream.name || !redefined)) continue;
        this.emit({ type: 'prompts.changed', server, added, removed, count: owner?.prompts.length ?? 0, cause });
      }
    }
    if (lists.resources || lists.resourceTemplates) {
      const resources = lists.resources ?? share.resources;
      const templates = lists.resourceTemplates ?? share.resourceTemplates;
      const redefined = !sameDefinitions(share.resources, resources) || !sameDefinitions(share.resourceTemplates, templates);
      share.resources = resources;
      share.resourceTemplates = templates;
      const { added, removed } = this.resources.setServer(upstream.name, resources, templates);
      if (added.length > 0 || removed.length > 0 || redefined) {
        this.emit({ type: 'resources.changed', server: upstream.name, added, removed, count: resources.length + templates.length, cause });
      }
    }
  }

  /** Drops every kind of one server. */
  clearServer(upstream: ShareOwner, cause: ToolsChangedCause): void {
    this.setTools(upstream, [], { cause, deferred: false, stale: false });
    this.setOthers(upstream, { prompts: [], resources: [], resourceTemplates: [] }, cause);
    const share = this.share(upstream.name);
    share.hints = undefined;
    share.instance = undefined;
  }

  /** Forgets a server that left the config. */
  forgetServer(server: string): void {
    this.shares.delete(server);
  }

  clear(): void {
    this.shares.clear();
    this.tools.clear();
    this.prompts.clear();
    this.resources.clear();
  }
}

/** Same items, same definitions (a reconnect or a re-list that changed nothing). */
function sameDefinitions(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a === b || (a.length === b.length && JSON.stringify(a) === JSON.stringify(b));
}
