import { errorMessage } from '../../errors.js';
import { withAttemptOutput, type ServerConnection } from '../transport/connection.js';
import type { ToolListing } from '../transport/list-tools.js';
import type { OtherLists } from '../transport/other-lists.js';
import { isEraMismatch } from '../transport/protocol-era.js';
import type { UpstreamHost, UpstreamIdentity } from './upstream-host.js';

/** A connection that answered its first lists: what an attempt hands the state machine. */
export interface Connected {
  connection: ServerConnection;
  listing: ToolListing;
  others: Partial<OtherLists>;
  /** Whether a `list_changed` arrived while the first list was out (it stops watching, once). */
  changedSinceList: () => boolean;
}

/** The first request on a cached verdict was refused as the wrong era. */
class StaleVerdictError extends Error {
  constructor(cause: unknown) {
    super('the cached protocol verdict is stale', { cause });
  }
}

/**
 * One connect attempt: connect, then list tools and the other kinds together. A cached modern
 * verdict the server no longer honours is forgotten and the era negotiated afresh, once.
 */
export async function connectAndList(host: UpstreamHost, upstream: UpstreamIdentity, signal: AbortSignal): Promise<Connected> {
  try {
    return await connectAndListOnce(host, upstream, signal, false);
  } catch (err) {
    if (!(err instanceof StaleVerdictError)) throw err;
    host.log.info({ server: upstream.name, err: errorMessage(err.cause) }, 'cached protocol verdict is stale; negotiating again');
    host.dropVerdict(upstream);
    return connectAndListOnce(host, upstream, signal, true);
  }
}

async function connectAndListOnce(host: UpstreamHost, upstream: UpstreamIdentity, signal: AbortSignal, ignoreCachedVerdict: boolean): Promise<Connected> {
  const started = host.clock.now();
  const connection = await host.connect(upstream, signal, { ignoreCachedVerdict });
  // A list_changed may arrive with (or just after) the first list, before the connection is
  // attached; remember it so the list is fetched again instead of lost.
  let changed = false;
  const stopWatching = connection.onToolsListChanged(() => (changed = true));
  try {
    const [listing, others] = await Promise.all([host.list(upstream, connection, signal), host.listOthers(upstream, connection, signal)]);
    host.log.info({ server: upstream.name, tools: listing.tools.length, ms: host.clock.now() - started }, 'connected');
    return {
      connection,
      listing,
      others,
      changedSinceList: () => {
        stopWatching();
        return changed;
      },
    };
  } catch (err) {
    stopWatching();
    await connection.close();
    if (connection.verdictFromCache && isEraMismatch(err, connection.era)) throw new StaleVerdictError(err);
    // The connection is never attached: what its server wrote goes with the error.
    throw withAttemptOutput(err, connection.stderr);
  }
}
