import { randomUUID } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/client';
import { z } from 'zod';
import type { StateStore } from '../store/ports.js';

/**
 * Loops between Switchboard instances (SPEC §11). Each daemon has an instance id and, in the
 * `_meta` of its `tools/list` answers, advertises itself and — as a tree — every Switchboard it
 * aggregates. Each tool it serves carries the ids of the instances it passed through. A daemon:
 * - never takes a tool whose origin includes its own id (so no tool ever comes back home, not
 *   even while a loop is still being detected);
 * - refuses an upstream whose tree leads back to itself when it holds the smallest id of that
 *   cycle. One member per cycle refuses, and always the same one, so which link breaks does not
 *   depend on who started first and stays the same across reloads.
 */

/** `_meta` key of a `tools/list` result: the answering daemon and what it aggregates. */
export const INSTANCE_META_KEY = 'switchboard/instance';
/** `_meta` key of a served tool: the instance ids it passed through, nearest first. */
export const ORIGIN_META_KEY = 'switchboard/origin';

/** How deep and how large an advertised tree may be; beyond, the rest is dropped. */
const MAX_DEPTH = 8;
const MAX_NODES = 64;

export interface InstanceIdentity {
  /** Random, kept in the state store per configured port, so it survives restarts. */
  readonly id: string;
  /** How people know this daemon: its listening address. */
  readonly label: string;
  /** A replica's cluster (issue #43 item 5): every replica of it is this daemon, for loops. */
  readonly cluster?: string;
}

export interface InstanceAd {
  id: string;
  label: string;
  cluster?: string;
  upstreams: InstanceAd[];
}

export interface LoopVerdict {
  /** Whether this daemon is the one to break the cycle (it holds the cycle's smallest id). */
  refuse: boolean;
  /** `loop: 127.0.0.1:7001 → 127.0.0.1:7002 → 127.0.0.1:7001`, for `/status` and the log. */
  message: string;
}

/**
 * The id this daemon keeps for `port`, made on first use: two daemons on two ports get two ids.
 * Without a fixed port (port 0: a new one every run) there is nothing to keep it by, and two such
 * daemons sharing a store must still differ, so the id is a fresh one each time.
 */
export async function loadInstanceId(state: StateStore, port: number | undefined): Promise<string> {
  if (port === undefined) return randomUUID();
  const key = `instance-id:${port}`;
  const kept = await state.get(key);
  if (kept !== undefined) return kept;
  const id = randomUUID();
  await state.set(key, id);
  return id;
}

const NodeSchema = z.object({
  id: z.string().min(1).max(200),
  label: z.string().max(200),
  cluster: z.string().min(1).max(200).optional(),
  upstreams: z.array(z.unknown()).optional(),
});

/** The advertisement in a `tools/list` `_meta`, validated and bounded; undefined when absent or bad. */
export function parseInstanceAd(meta: Record<string, unknown> | undefined): InstanceAd | undefined {
  const budget = { nodes: MAX_NODES };
  return parseNode(meta?.[INSTANCE_META_KEY], 0, budget);
}

function parseNode(value: unknown, depth: number, budget: { nodes: number }): InstanceAd | undefined {
  if (depth >= MAX_DEPTH || budget.nodes <= 0) return undefined;
  const parsed = NodeSchema.safeParse(value);
  if (!parsed.success) return undefined;
  budget.nodes -= 1;
  const upstreams: InstanceAd[] = [];
  for (const child of parsed.data.upstreams ?? []) {
    if (budget.nodes <= 0) break;
    const node = parseNode(child, depth + 1, budget);
    if (node) upstreams.push(node);
  }
  return { id: parsed.data.id, label: parsed.data.label, ...(parsed.data.cluster !== undefined ? { cluster: parsed.data.cluster } : {}), upstreams };
}

/** This daemon's advertisement: itself over the advertisements of the upstreams it keeps. */
export function buildInstanceAd(self: InstanceIdentity, upstreams: readonly InstanceAd[]): InstanceAd {
  const budget = { nodes: MAX_NODES - 1 };
  return { ...node(self), upstreams: upstreams.map((u) => prune(u, 1, budget)).filter((u) => u !== undefined) };
}

function prune(ad: InstanceAd, depth: number, budget: { nodes: number }): InstanceAd | undefined {
  if (depth >= MAX_DEPTH || budget.nodes <= 0) return undefined;
  budget.nodes -= 1;
  return { ...node(ad), upstreams: ad.upstreams.map((u) => prune(u, depth + 1, budget)).filter((u) => u !== undefined) };
}

function node(of: { id: string; label: string; cluster?: string | undefined }): Omit<InstanceAd, 'upstreams'> {
  return { id: of.id, label: of.label, ...(of.cluster !== undefined ? { cluster: of.cluster } : {}) };
}

/**
 * Whether the upstream advertising `ad` leads back to `self`; undefined when it does not. With
 * several ways back, this daemon refuses when it is the smallest id of any of those cycles.
 */
export function findLoop(self: InstanceIdentity, ad: InstanceAd): LoopVerdict | undefined {
  const cycles: InstanceAd[][] = [];
  const home = self.cluster === undefined ? undefined : clusterLoop(self, ad, []);
  if (home) return home;
  const walk = (node: InstanceAd, path: InstanceAd[]): void => {
    if (node.id === self.id) {
      cycles.push(path);
      return;
    }
    for (const child of node.upstreams) walk(child, [...path, node]);
  };
  walk(ad, []);
  const first = cycles[0];
  if (first === undefined) return undefined;
  const refuse = cycles.some((cycle) => cycle.every((node) => self.id <= node.id));
  const chosen = cycles.find((cycle) => cycle.every((node) => self.id <= node.id)) ?? first;
  const labels = [self.label, ...chosen.map((node) => node.label), self.label];
  return { refuse, message: `loop: ${labels.join(' → ')}` };
}

/**
 * A replica of this daemon's own cluster in the tree (issue #43 item 5): it serves what this one
 * does, so reaching one is coming home — whatever its instance id — and every replica refuses
 * the link (no other member of the cycle could be left to break it).
 */
function clusterLoop(self: InstanceIdentity, node: InstanceAd, path: InstanceAd[]): LoopVerdict | undefined {
  if (node.cluster === self.cluster && node.id !== self.id) {
    const labels = [self.label, ...path.map((n) => n.label), `${node.label} (a replica of this cluster)`];
    return { refuse: true, message: `loop: ${labels.join(' → ')}` };
  }
  for (const child of node.upstreams) {
    const found = clusterLoop(self, child, [...path, node]);
    if (found) return found;
  }
  return undefined;
}

/** The instance ids a listed tool passed through, as its server advertised them. */
export function originOf(tool: Pick<Tool, '_meta'>): readonly string[] {
  const origin = tool._meta?.[ORIGIN_META_KEY];
  return Array.isArray(origin) ? origin.filter((id): id is string => typeof id === 'string') : [];
}

/** Drops the tools that came from `selfId` in the first place. */
export function withoutOwnTools(tools: Tool[], selfId: string): Tool[] {
  if (!tools.some((tool) => originOf(tool).includes(selfId))) return tools;
  return tools.filter((tool) => !originOf(tool).includes(selfId));
}
