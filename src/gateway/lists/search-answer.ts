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
  /** How many servers the map may name. */
  maxServers: number;
}

export const DEFAULT_SHAPE: AnswerShape = { matchShare: 0.55, described: 30, round: 8, maxServers: 12 };
/** The longest first sentence shown, in characters. */
const MAX_ABOUT = 110;

/**
 * The matches that fit (the first always; a later one whose definition would pass the budget is
 * left to the map) and the map filling what is left. Sizes are counted as the JSON is written.
 */
export function buildAnswer<T extends { name: string }>(input: AnswerInput<T>): { tools: T[]; related: RelatedServer[]; /** At least the answer's size as JSON. */ bytes: number } {
  const { matchShare, described: toDescribe, round: ROUND, maxServers: MAX_SERVERS } = input.shape ?? DEFAULT_SHAPE;
  const tools: T[] = [];
  let bytes = '{"tools":[],"related":[]}'.length;
  const named = new Set<string>();
  const skipped: string[] = [];
  for (const match of input.matches) {
    const size = byteLength(JSON.stringify(match)) + 1;
    if (tools.length > 0 && bytes + size > input.budget * matchShare) {
      skipped.push(match.name);
      continue;
    }
    tools.push(match);
    named.add(match.name);
    bytes += size;
  }
  const groups = new Map<string, RelatedServer>();
  const fits = (size: number): boolean => bytes + size <= input.budget;
  const groupOf = (server: string): RelatedServer | undefined => {
    let group = groups.get(server);
    if (group) return group;
    if (groups.size >= MAX_SERVERS) return undefined;
    const about = input.aboutOf?.(server);
    group = { server, ...(about ? { about: firstSentence(about) } : {}), tools: [], names: [], more: 0 };
    // Counted with room for its `more` count, written last.
    const size = byteLength(JSON.stringify({ ...group, more: 99_999 })) + 1;
    if (!fits(size)) return undefined;
    bytes += size;
    groups.set(server, group);
    return group;
  };
  // The next likeliest tools with a sentence each, then names server by server, a round at a time.
  let described = 0;
  const byName = new Map<string, BridgedTool>();
  for (const tool of input.matchTools ?? (input.matches as readonly unknown[] as readonly BridgedTool[])) byName.set(tool.name, tool);
  const ahead = [...skipped.map((name) => byName.get(name)).filter((tool): tool is BridgedTool => tool !== undefined), ...input.next];
  for (const tool of ahead) {
    if (described >= toDescribe || named.has(tool.name)) continue;
    const group = groupOf(tool.server);
    if (!group) continue;
    const entry = { name: tool.name, about: firstSentence(tool.description) };
    const size = byteLength(JSON.stringify(entry)) + 1;
    if (!fits(size)) break;
    group.tools.push(entry);
    named.add(tool.name);
    bytes += size;
    described++;
  }
  // Then names, server by server a round at a time (a few deep into many servers before deep
  // into one): each server's ranked tools first, then the rest of its tools.
  const servers = [...new Set([...input.servers, ...ahead.map((tool) => tool.server)])].slice(0, MAX_SERVERS);
  const queues = servers.map((server) => {
    const ranked = ahead.filter((tool) => tool.server === server);
    return { server, names: [...new Set([...ranked, ...input.toolsOf(server)].map((tool) => tool.name))].filter((name) => !named.has(name)) };
  });
  for (let round = 0, full = false; !full && queues.some((queue) => queue.names.length > 0); round++) {
    for (const queue of queues) {
      const group = queue.names.length > 0 ? groupOf(queue.server) : undefined;
      const take = queue.names.splice(0, ROUND);
      if (!group) continue;
      for (const name of take) {
        const size = byteLength(JSON.stringify(name)) + 1;
        if (!fits(size)) {
          full = true;
          break;
        }
        group.names.push(name);
        named.add(name);
        bytes += size;
      }
      if (full) break;
    }
  }
  const related = [...groups.values()].filter((group) => group.tools.length + group.names.length > 0);
  for (const group of related) group.more = input.toolsOf(group.server).filter((tool) => !named.has(tool.name)).length;
  return { tools, related, bytes };
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
