import { createHash, randomBytes } from 'node:crypto';
import type { AgentView } from '../agents/agent-view.js';
import type { ToolCatalogue } from '../../upstream/catalogue/tool-catalogue.js';

type Tool = ReturnType<ToolCatalogue['list']>[number];

/**
 * One server's tools as JSON: `bytes` is their entries joined by `,` (no brackets), `starts[i]`
 * the byte offset of entry i, so any run of consecutive entries is a zero-copy `subarray`.
 */
interface Fragment {
  revision: number;
  bytes: Buffer;
  starts: number[];
}

const COMMA = Buffer.from(',');
const TAIL = Buffer.from(']}');

/** What narrows a tool list: a server, and a text filter (`GET /tools?server=&q=`). */
export interface ToolListQuery {
  server?: string | undefined;
  q?: string | undefined;
}

/**
 * The `GET /tools` bodies and ETags. The unfiltered body is built once per catalogue version and
 * kept as a Buffer, so a 10 000-tool list is one socket write and a 304 is a string comparison.
 * It is built from per-server fragments (each server's entries, already JSON) that are
 * serialised again only when that server's revision moved: after a one-server change the cost
 * is that server's tools plus one copy of the bytes, not `JSON.stringify` of the whole
 * catalogue. The output is byte for byte `JSON.stringify({version, tools})`. ETags carry a
 * per-process id: the catalogue version restarts at 0 with every daemon, and a client must
 * never get a 304 for the previous process's list.
 */
export class ToolListCache {
  private readonly instance = randomBytes(6).toString('hex');
  private version = -1;
  private etag = '';
  private body: Buffer = Buffer.alloc(0);
  private readonly fragments = new Map<string, Fragment>();
  private serialised = 0;
  /** Per agent view (issue #22), by view key: its tag in ETags, and its unfiltered body at one version. */
  private readonly views = new Map<string, { tag: string; version: number; body: string }>();

  /** Tools passed to `JSON.stringify` so far: what a change cost (tests and diagnosis). */
  get toolsSerialised(): number {
    return this.serialised;
  }

  /**
   * The ETag of the list at `version` with these filters, as `view` sees it: every view has its
   * own tag (a digest of its key, not a 32-bit hash), so one view's ETag never matches another's.
   */
  etagFor(version: number, query: ToolListQuery, view?: AgentView): string {
    const scope = view === undefined ? '' : `-v${this.viewOf(view).tag}`;
    if (query.server === undefined && query.q === undefined) {
      return version === this.version && !view ? this.etag : this.makeEtag(version, scope);
    }
    return this.makeEtag(version, `${scope}-${fnv1a(`${query.server ?? ''}\u0000${query.q ?? ''}`)}`);
  }

  /** The unfiltered body `view` sees, rebuilt only when the version moved; shared by equal views. */
  viewBody(catalogue: ToolCatalogue, view: AgentView): string {
    const cached = this.viewOf(view);
    if (cached.version !== catalogue.version) {
      const tools = catalogue.list().filter((tool) => view.allowsTool(tool));
      this.serialised += tools.length;
      cached.body = serialise(catalogue.version, tools);
      cached.version = catalogue.version;
    }
    return cached.body;
  }

  /** The unfiltered body of `catalogue`, rebuilt only when its version moved. */
  fullBody(catalogue: ToolCatalogue): Buffer {
    const version = catalogue.version;
    if (version === this.version) return this.body;
    const chunks: Buffer[] = [head(version)];
    const live = new Set<string>();
    for (const run of catalogue.runs()) {
      const fragment = this.fragmentOf(catalogue, run.server);
      live.add(run.server);
      if (chunks.length > 1) chunks.push(COMMA);
      const end = run.offset + run.count;
      chunks.push(fragment.bytes.subarray(fragment.starts[run.offset], end < fragment.starts.length ? (fragment.starts[end] as number) - 1 : fragment.bytes.length));
    }
    chunks.push(TAIL);
    for (const server of this.fragments.keys()) if (!live.has(server)) this.fragments.delete(server);
    this.body = Buffer.concat(chunks);
    this.etag = this.makeEtag(version, '');
    this.version = version;
    return this.body;
  }

  /**
   * A filtered body; not cached. `?server=` alone is that server's fragment; a `q` filter
   * serialises the tools that match.
   */
  filteredBody(catalogue: ToolCatalogue, query: ToolListQuery, view?: AgentView): Buffer | string {
    const all = query.server === undefined ? catalogue.list() : catalogue.itemsOf(query.server);
    const tools = view ? all.filter((tool) => view.allowsTool(tool)) : all;
    const needle = query.q?.toLowerCase();
    if (!needle) {
      if (view || query.server === undefined || tools.length === 0) return serialise(catalogue.version, tools);
      return Buffer.concat([head(catalogue.version), this.fragmentOf(catalogue, query.server).bytes, TAIL]);
    }
    const matching = tools.filter((tool) => tool.name.toLowerCase().includes(needle) || (tool.description ?? '').toLowerCase().includes(needle));
    this.serialised += matching.length;
    return serialise(catalogue.version, matching);
  }

  private fragmentOf(catalogue: ToolCatalogue, server: string): Fragment {
    const revision = catalogue.revisionOf(server);
    const cached = this.fragments.get(server);
    if (cached?.revision === revision) return cached;
    const tools = catalogue.itemsOf(server);
    const starts = new Array<number>(tools.length);
    const entries = new Array<string>(tools.length);
    let offset = 0;
    for (let i = 0; i < tools.length; i++) {
      const json = JSON.stringify(tools[i]);
      entries[i] = json;
      starts[i] = offset;
      offset += Buffer.byteLength(json) + 1;
    }
    this.serialised += tools.length;
    const fragment = { revision, bytes: Buffer.from(entries.join(',')), starts };
    this.fragments.set(server, fragment);
    return fragment;
  }

  private viewOf(view: AgentView): { tag: string; version: number; body: string } {
    let entry = this.views.get(view.key);
    if (!entry) {
      entry = { tag: createHash('sha256').update(view.key).digest('base64url').slice(0, 16), version: -1, body: '' };
      this.views.set(view.key, entry);
    }
    return entry;
  }

  private makeEtag(version: number, suffix: string): string {
    return `"${this.instance}-${version}${suffix}"`;
  }
}

function head(version: number): Buffer {
  return Buffer.from(`{"version":${version},"tools":[`);
}

function serialise(version: number, tools: readonly Tool[]): string {
  return `{"version":${version},"tools":${JSON.stringify(tools)}}`;
}

/**
 * RFC 9110 `If-None-Match`: `*`, or a list of (possibly weak) tags; weak comparison applies.
 * The exact-match test first keeps the common single-tag revalidation to one comparison.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header === etag) return true;
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true;
  }
  return false;
}

/** 32-bit FNV-1a, hex: a stable, short tag for the filter part of an ETag. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16);
}
