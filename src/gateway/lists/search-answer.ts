import type { BridgedTool } from '../../upstream/catalogue/tool-bridge.js';

/**
 * A search answer a model can finish from (issue #37 item 1): the ranked matches in full, and
 * within a byte budget a map of their neighbourhood — the other tools of the servers the matches
 * come from and of the next likely servers, by exposed name, the likeliest with their first
 * sentence. A model that reads "git: git_status, git_stash, git_reflog, …" can pick the tool words
 * alone ranked tenth, and ask `describe_tools` for its schema.
 */

/** One server in the map. */
export interface RelatedServer {
  server: string;
  /** What the server says of itself (the first sentence of its instructions), if anything. */
  about?: string;
  /** Its likeliest tools (not among the matches), with the first sentence of their description. */
  tools: Array<{ name: string; about: string }>;
  /** More of its tools, by name only. */
  names: string[];
  /** How many of its tools in the caller's view the map leaves out. */
  more: number;
}

export interface AnswerInput<T> {
  /** The ranked matches as the answer shows them (definitions or rows), best first. */
  matches: readonly T[];
  /**
   * The tools behind `matches`, in the same order: a match left out for the budget is shown in the
   * map first, with its sentence. Absent: `matches` are those tools themselves.
   */
  matchTools?: readonly BridgedTool[];
  /** The tools ranked after them (best first), for the map. */
  next: readonly BridgedTool[];
  /** The servers of the ranking, best first. */
  servers: readonly string[];
  /** A server's tools in the caller's view. */
  toolsOf: (server: string) => readonly BridgedTool[];
  /** Every server in the caller's view, for the rest of the map (servers the ranking did not reach). */
  allServers?: readonly string[];
  /** What a server says of itself, if anything. */
  aboutOf?: (server: string) => string | undefined;
  /** The budget, in bytes of the answer's JSON. */
  budget: number;
  /** @default DEFAULT_SHAPE */
  shape?: AnswerShape;
}

/** How the map is laid out; `DEFAULT_SHAPE` was chosen on the query set alone (bench/search/answer-eval.ts). */
export interface AnswerShape {
  /**
   * The share of the budget the matches may take (the first match is always whole): schemas are
   * large, and past this a name in the map tells a model more than another schema.
   */
  matchShare: number;
  /** How many of the next tools are shown with their first sentence (the rest of the map is names). */
  described: number;
  /** Names per server per round: a few deep into many servers before deep into one. */
  round: number;
  /** How many ranked servers the map may name (the rest of the view comes on top). */
  maxServers: number;
  /** The share of the budget kept for the rest of the view: servers outside the ranked ones, whole, smallest first. */
  restShare: number;
  /** The most tools a server of the rest may have (it is named whole or not at all). */
  restTools: number;
}

/**
 * Chosen on the query set alone (bench/search/answer-eval.ts, BENCHMARKS.md issue #37): a task that
 * shares no word with its tool is found when its server is named at all, so a name spent on a small
 * server the ranking missed is worth more than a third schema or the 30th name of a ranked server.
 */
export const DEFAULT_SHAPE: AnswerShape = { matchShare: 0.35, described: 20, round: 8, maxServers: 12, restShare: 0.4, restTools: 30 };
/** The longest first sentence shown, in characters. */
const MAX_ABOUT = 110;

/**
 * The matches that fit (the first always; a later one whose definition would pass its share of the
 * budget is left to the map), then the map: the next likeliest tools with their sentence, names of
 * the ranked servers a round at a time, the rest of the view's small servers whole in the share kept
 * for them, and ranked names again in whatever that leaves. Sizes are counted as the JSON is written.
 */
export function buildAnswer<T extends { name: string }>(input: AnswerInput<T>): { tools: T[]; related: RelatedServer[]; /** At least the answer's size as JSON. */ bytes: number } {
  const shape = { ...DEFAULT_SHAPE, ...input.shape };
  const map = new MapBuilder(input, shape);
  const tools: T[] = [];
  const skipped: string[] = [];
  for (const match of input.matches) {
    const size = byteLength(JSON.stringify(match)) + 1;
    if (tools.length > 0 && map.bytes + size > input.budget * shape.matchShare) {
      skipped.push(match.name);
      continue;
    }
    tools.push(match);
    map.named.add(match.name);
    map.bytes += size;
  }
  const byName = new Map<string, BridgedTool>();
  for (const tool of input.matchTools ?? input.matches.filter(isTool)) byName.set(tool.name, tool);
  const ahead = [...skipped.map((name) => byName.get(name)).filter((tool): tool is BridgedTool => tool !== undefined), ...input.next];
  // The share kept for the rest of the view is off limits until the ranked part is done.
  map.limit = input.budget - (input.allServers ? Math.floor(input.budget * shape.restShare) : 0);
  map.describe(ahead);
  const queues = map.queues(ahead);
  map.rounds(queues);
  map.limit = input.budget;
  map.rest();
  map.rounds(queues);
  return { tools, related: map.related(), bytes: map.bytes };
}

/** The map being built within the budget: its groups, the names already in the answer, the bytes used. */
class MapBuilder {
  readonly groups = new Map<string, RelatedServer>();
  readonly named = new Set<string>();
  bytes = '{"tools":[],"related":[]}'.length;
  limit: number;
  private servers: number;

  constructor(
    private readonly input: AnswerInput<unknown>,
    private readonly shape: AnswerShape,
  ) {
    this.limit = input.budget;
    this.servers = shape.maxServers;
  }

  fits(size: number): boolean {
    return this.bytes + size <= this.limit;
  }

  /** `server`'s group, opened (and its bytes counted) if the budget and the server count allow. */
  groupOf(server: string): RelatedServer | undefined {
    let group = this.groups.get(server);
    if (group) return group;
    if (this.groups.size >= this.servers) return undefined;
    const about = this.input.aboutOf?.(server);
    group = { server, ...(about ? { about: firstSentence(about) } : {}), tools: [], names: [], more: 0 };
    // Counted with room for its `more` count, written last.
    const size = byteLength(JSON.stringify({ ...group, more: 99_999 })) + 1;
    if (!this.fits(size)) return undefined;
    this.bytes += size;
    this.groups.set(server, group);
    return group;
  }

  /** The next likeliest tools, each with its first sentence. */
  describe(ahead: readonly BridgedTool[]): void {
    let described = 0;
    for (const tool of ahead) {
      if (described >= this.shape.described) return;
      if (this.named.has(tool.name)) continue;
      const group = this.groupOf(tool.server);
      if (!group) continue;
      const entry = { name: tool.name, about: firstSentence(tool.description) };
      const size = byteLength(JSON.stringify(entry)) + 1;
      if (!this.fits(size)) return;
      group.tools.push(entry);
      this.named.add(tool.name);
      this.bytes += size;
      described++;
    }
  }

  /** Per ranked server (at most `maxServers`), its names: its ranked tools first, then the rest of its tools. */
  queues(ahead: readonly BridgedTool[]): Array<{ server: string; names: string[] }> {
    const servers = [...new Set([...this.input.servers, ...ahead.map((tool) => tool.server)])].slice(0, this.shape.maxServers);
    return servers.map((server) => {
      const ranked = ahead.filter((tool) => tool.server === server);
      return { server, names: [...new Set([...ranked, ...this.input.toolsOf(server)].map((tool) => tool.name))] };
    });
  }

  /** Names server by server, `round` at a time (a few deep into many servers before deep into one), until one does not fit. */
  rounds(queues: Array<{ server: string; names: string[] }>): void {
    for (const queue of queues) queue.names = queue.names.filter((name) => !this.named.has(name));
    for (let progress = true; progress;) {
      progress = false;
      for (const queue of queues) {
        const group = queue.names.length > 0 ? this.groupOf(queue.server) : undefined;
        if (!group) continue;
        progress = true;
        for (let taken = 0; taken < this.shape.round && queue.names.length > 0; taken++) {
          const name = queue.names[0] as string;
          const size = byteLength(JSON.stringify(name)) + 1;
          if (!this.fits(size)) return;
          queue.names.shift();
          group.names.push(name);
          this.named.add(name);
          this.bytes += size;
        }
      }
    }
  }

  /** The rest of the view: servers not in the map yet with at most `restTools` tools, each whole or not at all, smallest first. */
  rest(): void {
    const rest: Array<{ server: string; names: string[] }> = [];
    for (const server of this.input.allServers ?? []) {
      if (this.groups.has(server)) continue;
      // Sized before any name is looked at: a big server costs nothing here.
      const tools = this.input.toolsOf(server);
      if (tools.length > this.shape.restTools) continue;
      const names = tools.map((tool) => tool.name).filter((name) => !this.named.has(name));
      if (names.length > 0) rest.push({ server, names });
    }
    rest.sort((x, y) => x.names.length - y.names.length);
    this.servers = Infinity;
    for (const entry of rest) {
      const size = entry.names.reduce((sum, name) => sum + byteLength(JSON.stringify(name)) + 1, 0);
      const before = this.bytes;
      const group = this.groupOf(entry.server);
      if (!group) continue;
      if (!this.fits(size)) {
        this.groups.delete(entry.server);
        this.bytes = before;
        continue;
      }
      group.names.push(...entry.names);
      for (const name of entry.names) this.named.add(name);
      this.bytes += size;
    }
  }

  /** The groups that name something, each with how many of its tools it leaves out. */
  related(): RelatedServer[] {
    const related = [...this.groups.values()].filter((group) => group.tools.length + group.names.length > 0);
    for (const group of related) group.more = this.input.toolsOf(group.server).filter((tool) => !this.named.has(tool.name)).length;
    return related;
  }
}

/** Whether a match is a catalogue tool itself (it has a server), not a row or a definition. */
function isTool<T>(match: T): match is T & BridgedTool {
  return typeof (match as { server?: unknown }).server === 'string' && typeof (match as { description?: unknown }).description === 'string';
}

/** The first sentence of `text`, at most `MAX_ABOUT` characters. */
export function firstSentence(text: string): string {
  const line = text.trim().split(/\n/)[0] ?? '';
  const end = line.search(/[.!?](?:\s|$)/);
  const sentence = end === -1 ? line : line.slice(0, end + 1);
  return sentence.length <= MAX_ABOUT ? sentence : `${sentence.slice(0, MAX_ABOUT - 1).trimEnd()}…`;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text);
}
