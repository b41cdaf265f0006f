import { randomBytes } from 'node:crypto';
import type { ToolCatalogue } from '../mcp/tool-catalogue.js';
import type { ToolListQuery } from './schemas.js';

type Tool = ReturnType<ToolCatalogue['list']>[number];

/**
 * The `GET /tools` bodies and ETags. The unfiltered body is serialised once per catalogue
 * version and kept as a Buffer, so a 10 000-tool list is one socket write and a 304 is a string
 * comparison. ETags carry a per-process id: the catalogue version restarts at 0 with every
 * daemon, and a client must never get a 304 for the previous process's list.
 */
export class ToolListCache {
  private readonly instance = randomBytes(6).toString('hex');
  private version = -1;
  private etag = '';
  private body: Buffer = Buffer.alloc(0);

  /** The ETag of the list at `version` with these filters. */
  etagFor(version: number, query: ToolListQuery): string {
    if (query.server === undefined && query.q === undefined) {
      return version === this.version ? this.etag : this.makeEtag(version, '');
    }
    return this.makeEtag(version, `-${fnv1a(`${query.server ?? ''}\u0000${query.q ?? ''}`)}`);
  }

  /** The unfiltered body of `catalogue`, rebuilt only when its version moved. */
  fullBody(catalogue: ToolCatalogue): Buffer {
    const version = catalogue.version;
    if (version !== this.version) {
      this.body = Buffer.from(serialise(version, catalogue.list()));
      this.etag = this.makeEtag(version, '');
      this.version = version;
    }
    return this.body;
  }

  /** A filtered body; filters are cheap next to the JSON, so these are not cached. */
  filteredBody(catalogue: ToolCatalogue, query: ToolListQuery): string {
    const needle = query.q?.toLowerCase();
    const tools = catalogue.list().filter((tool) => {
      if (query.server !== undefined && tool.server !== query.server) return false;
      if (!needle) return true;
      return tool.name.toLowerCase().includes(needle) || (tool.description ?? '').toLowerCase().includes(needle);
    });
    return serialise(catalogue.version, tools);
  }

  private makeEtag(version: number, suffix: string): string {
    return `"${this.instance}-${version}${suffix}"`;
  }
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
