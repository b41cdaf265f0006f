import type { Tool } from '@modelcontextprotocol/client';
import type { ManagerEvent, ToolsChangedCause } from '../events.js';
import { withoutOwnTools } from '../upstream/instance.js';
import type { OtherLists } from '../transport/other-lists.js';
import { PromptCatalogue } from './prompt-bridge.js';
import { ResourceCatalogue } from './resource-catalogue.js';
import { ToolCatalogue } from './tool-catalogue.js';
import { filterTools } from './tool-filter.js';
import type { Upstream } from '../upstream/upstream.js';

/**
 * The aggregate of every kind — tools, prompts, resources — and the one place each server's
 * share of it changes, emitting what changed (SPEC §7, §9). Per kind one catalogue, fed the
 * same way; the upstream keeps its last known lists, this keeps the aggregate views.
 */
export class Catalogues {
  readonly tools = new ToolCatalogue();
  readonly prompts = new PromptCatalogue();
  readonly resources = new ResourceCatalogue();

  constructor(
    private readonly emit: (event: ManagerEvent) => void,
    private readonly selfId: () => string,
    private readonly upstreamOf: (server: string) => Upstream | undefined,
    /**
     * A server said a list changed (`list_changed`) and it was listed again: agents are told so
     * even when nothing visible changed — a direct connection would have told them too.
     */
    private readonly announce: (kind: 'tools' | 'prompts' | 'resources') => void = () => {},
  ) {}

  /**
   * Replaces one server's tools and emits the change: names that came or went (for this server
   * and for any other whose tool a new collision renamed), a deferred → live switch, or new
   * definitions under the same names. Marking the list stale, or live again after a reconnect
   * that brought the same tools, changes no tool and emits nothing (SPEC §6).
   */
  setTools(upstream: Upstream, listed: Tool[], flags: { cause: ToolsChangedCause; deferred: boolean; stale: boolean }): void {
    // A tool that passed through this daemon before (a loop not yet broken) never comes back, and
    // a tool the config filters out (includeTools / excludeTools) is never exposed.
    const tools = filterTools(withoutOwnTools(listed, this.selfId()), upstream.config);
    const deferredChanged = upstream.deferred !== flags.deferred;
    const redefined = tools !== upstream.tools && flags.cause !== 'disconnect' && !sameDefinitions(upstream.tools, tools);
    upstream.tools = tools;
    upstream.deferred = flags.deferred;
    upstream.stale = flags.stale;
    if (flags.cause === 'list_changed') this.announce('tools');
    const diffs = this.tools.setServer(upstream.name, upstream.source.providerName, tools, {
      deferred: flags.deferred,
      stale: flags.stale,
      prefix: upstream.config.toolPrefix,
    });
    for (const [server, { added, removed }] of diffs) {
      const other = server !== upstream.name ? this.upstreamOf(server) : undefined;
      const namesChanged = added.length > 0 || removed.length > 0;
      if (!namesChanged && (other || !(deferredChanged || redefined))) continue;
      this.emit({
        type: 'tools.changed',
        server,
        added,
        removed,
        toolCount: (other ?? upstream).tools.length,
        cause: flags.cause,
        deferred: (other ?? upstream).deferred,
      });
    }
  }

  /** Replaces the kinds given in `lists` of one server (prompts; resources and templates). */
  setOthers(upstream: Upstream, lists: Partial<OtherLists>, cause: ToolsChangedCause): void {
    if (cause === 'list_changed') {
      if (lists.prompts) this.announce('prompts');
      if (lists.resources || lists.resourceTemplates) this.announce('resources');
    }
    if (lists.prompts) {
      const redefined = !sameDefinitions(upstream.prompts, lists.prompts);
      upstream.prompts = lists.prompts;
      const diffs = this.prompts.setServer(upstream.name, upstream.source.providerName, lists.prompts, {
        deferred: false,
        stale: false,
        prefix: upstream.config.toolPrefix,
      });
      for (const [server, { added, removed }] of diffs) {
        const owner = server === upstream.name ? upstream : this.upstreamOf(server);
        if (added.length === 0 && removed.length === 0 && (server !== upstream.name || !redefined)) continue;
        this.emit({ type: 'prompts.changed', server, added, removed, count: owner?.prompts.length ?? 0, cause });
      }
    }
    if (lists.resources || lists.resourceTemplates) {
      const resources = lists.resources ?? upstream.resources;
      const templates = lists.resourceTemplates ?? upstream.resourceTemplates;
      const redefined = !sameDefinitions(upstream.resources, resources) || !sameDefinitions(upstream.resourceTemplates, templates);
      upstream.resources = resources;
      upstream.resourceTemplates = templates;
      const { added, removed } = this.resources.setServer(upstream.name, resources, templates);
      if (added.length > 0 || removed.length > 0 || redefined) {
        this.emit({ type: 'resources.changed', server: upstream.name, added, removed, count: resources.length + templates.length, cause });
      }
    }
  }

  /** Drops every kind of one server. */
  clearServer(upstream: Upstream, cause: ToolsChangedCause): void {
    this.setTools(upstream, [], { cause, deferred: false, stale: false });
    this.setOthers(upstream, { prompts: [], resources: [], resourceTemplates: [] }, cause);
  }

  clear(): void {
    this.tools.clear();
    this.prompts.clear();
    this.resources.clear();
  }
}

/** Same items, same definitions (a reconnect or a re-list that changed nothing). */
function sameDefinitions(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a === b || (a.length === b.length && JSON.stringify(a) === JSON.stringify(b));
}
