import picomatch from 'picomatch';
import { globMatcher, globProblem } from '../../util/glob-matcher.js';

/** What an agent may see and call (config `agents.<name>`, or `switchboard agents add`). */
export interface AgentScope {
  /** Globs over server names; absent = every server. */
  servers?: readonly string[];
  /** Globs over the tool names agents see; absent = every tool of the servers in scope. */
  tools?: readonly string[];
  /** Globs over the tool names agents see; wins over `tools`. */
  exclude?: readonly string[];
  /** @default "all" */
  access?: AgentAccess;
}

export type AgentAccess = 'read' | 'write' | 'all';

/** The parts of a tool a view looks at. */
export interface ViewedTool {
  /** The name agents see. */
  name: string;
  server: string;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
}

/**
 * An agent's view (SPEC §12), compiled once from its scope. Tools are in view when their server
 * is, their name matches `tools` and not `exclude`, and their annotations allow the access tier:
 * `read` = `readOnlyHint: true`; `write` = also `destructiveHint: false`; `all` = any. The MCP
 * defaults apply to a tool that says nothing (`readOnlyHint` false, `destructiveHint` true), so a
 * tool without annotations is only ever in an `all` view. Prompts and resources follow their
 * server: every tier may read them.
 */
export interface AgentView {
  /** Equal for equal scopes: caches of what a view sees (list bodies, ETags) key on it. */
  readonly key: string;
  /** True when the view hides nothing, so the unfiltered lists can be served as they are. */
  readonly everything: boolean;
  allowsServer(server: string): boolean;
  allowsTool(tool: ViewedTool): boolean;
}

const MATCH_OPTIONS = { dot: true, nobrace: false } as const;

/**
 * Compiles `scope` with the config's glob options (util/glob-matcher.ts). A list that does not
 * compile (config validation reports it first, so only by mistake) fails closed: an allow list
 * then matches nothing, an `exclude` list everything.
 */
export function compileAgentView(scope: AgentScope): AgentView {
  const servers = allowList(scope.servers);
  const tools = allowList(scope.tools);
  const exclude = scope.exclude !== undefined && scope.exclude.length > 0 ? globMatcher(scope.exclude) : undefined;
  const access = scope.access ?? 'all';
  const serverCache = new Map<string, boolean>();
  const allowsServer = (server: string): boolean => {
    let allowed = serverCache.get(server);
    if (allowed === undefined) serverCache.set(server, (allowed = servers === undefined || servers(server)));
    return allowed;
  };
  return {
    key: JSON.stringify([scope.servers ?? null, scope.tools ?? null, scope.exclude ?? null, access]),
    everything: servers === undefined && tools === undefined && exclude === undefined && access === 'all',
    allowsServer,
    allowsTool(tool) {
      if (!allowsServer(tool.server)) return false;
      if (tools !== undefined && !tools(tool.name)) return false;
      if (exclude !== undefined && exclude(tool.name)) return false;
      return accessAllows(access, tool.annotations);
    },
  };
}

/** Whether `access` lets an agent call a tool with these annotations (MCP defaults apply). */
export function accessAllows(access: AgentAccess, annotations: ViewedTool['annotations']): boolean {
  if (access === 'all') return true;
  const readOnly = annotations?.readOnlyHint === true;
  if (access === 'read') return readOnly;
  return readOnly || annotations?.destructiveHint === false;
}

/** Throws a readable error when `glob` cannot be compiled. */
export function checkGlob(glob: string): void {
  if (glob.length === 0) throw new Error('a glob cannot be empty');
  picomatch(glob, { ...MATCH_OPTIONS, strictBrackets: true });
}

/** An allow list: absent allows every name; one that does not compile allows none. */
function allowList(globs: readonly string[] | undefined): ((name: string) => boolean) | undefined {
  if (globs === undefined) return undefined;
  if (globs.length === 0) return () => false;
  for (const glob of globs) if (globProblem(glob) !== undefined) return () => false;
  return globMatcher(globs);
}

/** What both views allow (a JWT's claim-derived view within its config agent's own, issue #40 item 4). */
export function bothViews(first: AgentView, second: AgentView): AgentView {
  if (first.everything) return second;
  if (second.everything) return first;
  return {
    key: `${first.key}&${second.key}`,
    everything: false,
    allowsServer: (server) => first.allowsServer(server) && second.allowsServer(server),
    allowsTool: (tool) => first.allowsTool(tool) && second.allowsTool(tool),
  };
}
