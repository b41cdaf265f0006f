import type { Prompt, Resource, ResourceTemplateType as ResourceTemplate } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { errorMessage } from '../../errors.js';
import type { ListKind, ServerConnection } from './connection.js';

/** What a server lists besides its tools (SPEC §7). */
export interface OtherLists {
  prompts: Prompt[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
}

export const NO_OTHER_LISTS: OtherLists = { prompts: [], resources: [], resourceTemplates: [] };

/** The kinds a server's capabilities say it lists. */
export function kindsOf(connection: Pick<ServerConnection, 'capabilities'>): ListKind[] {
  const kinds: ListKind[] = [];
  if (connection.capabilities?.prompts) kinds.push('prompts');
  if (connection.capabilities?.resources) kinds.push('resources', 'resourceTemplates');
  return kinds;
}

/**
 * Lists `kinds` (by default every kind the server has) in parallel. A list that fails is logged
 * and left empty: a server whose prompts are broken still serves its tools. Not one that failed
 * while the server asked for a pause (`paused`): that says nothing of its lists, so it rejects,
 * and the caller lists again once the pause is over.
 */
export async function listOthers(
  connection: ServerConnection,
  options: { timeoutMs: number; signal?: AbortSignal; log: Logger; kinds?: readonly ListKind[]; paused?: () => boolean },
): Promise<Partial<OtherLists>> {
  const kinds = options.kinds ?? kindsOf(connection);
  const lists = await Promise.all(
    kinds.map(async (kind) => {
      try {
        const listing = await connection.list(kind, { timeoutMs: options.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) });
        return [kind, listing.items] as const;
      } catch (err) {
        if (options.signal?.aborted || options.paused?.()) throw err;
        options.log.warn({ server: connection.name, kind, err: errorMessage(err) }, 'listing failed; treated as empty');
        return [kind, []] as const;
      }
    }),
  );
  return Object.fromEntries(lists) as Partial<OtherLists>;
}
