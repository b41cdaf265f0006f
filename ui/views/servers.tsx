import { useState } from 'preact/hooks';
import { describeError, postJson } from '../api.js';
import { duration } from '../format.js';
import { now, serverList } from '../state.js';
import type { ServerSnapshot } from '../types.js';

/** The Servers view: one row per server, live from the feed; reload, disconnect and sign-in actions. */
export function ServersView() {
  const list = serverList.value;
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);

  const act = async (label: string, run: () => Promise<unknown>) => {
    setMessage(null);
    try {
      await run();
      setMessage({ text: label, error: false });
    } catch (err) {
      setMessage({ text: describeError(err), error: true });
    }
  };

  return (
    <section aria-labelledby="servers-title">
      <h2 id="servers-title">Servers</h2>
      {message && (
        <p class={message.error ? 'error' : 'note'} role={message.error ? 'alert' : 'status'}>
          {message.text}
        </p>
      )}
      {list.length === 0 ? (
        <p class="empty">No servers configured.</p>
      ) : (
        <div class="table-wrap">
          <table class="servers">
            <thead>
              <tr>
                <th scope="col">Server</th>
                <th scope="col">Status</th>
                <th scope="col">Era</th>
                <th scope="col">Transport</th>
                <th scope="col">Tools / prompts / resources</th>
                <th scope="col">Uptime</th>
                <th scope="col">PID</th>
                <th scope="col">Concurrency</th>
                <th scope="col">Last error</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.map((server) => (
                <ServerRow key={server.name} server={server} act={act} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

type Act = (label: string, run: () => Promise<unknown>) => Promise<void>;

function ServerRow({ server, act }: { server: ServerSnapshot; act: Act }) {
  const path = `/servers/${encodeURIComponent(server.name)}`;
  const retryIn = server.nextRetryAt ? Date.parse(server.nextRetryAt) - now.value : undefined;
  const signIn = async () => {
    const offer = await postJson<{ authorizationUrl?: string }>(`${path}/login`);
    // Opened by the person's click, in a new tab: the daemon's page at /oauth/callback ends it.
    if (offer.authorizationUrl) window.open(offer.authorizationUrl, '_blank', 'noopener');
  };
  return (
    <tr data-server={server.name} data-status={server.status}>
      <th scope="row">{server.name}</th>
      <td data-label="Status">
        <span class={`badge ${server.status}`}>{server.status.replace('_', ' ')}</span>
        {server.status === 'reconnecting' && retryIn !== undefined && <span class="retry"> retry in {duration(retryIn)}</span>}
      </td>
      <td data-label="Era">{server.protocol ? `${server.protocol.era}${server.protocol.version ? ` (${server.protocol.version})` : ''}` : '—'}</td>
      <td data-label="Transport">
        {server.transport}
        {server.sandbox && <Sandboxed sandbox={server.sandbox} />}
      </td>
      <td data-label="Tools / prompts / resources">
        {server.toolCount} / {server.promptCount} / {server.resourceCount}
        {server.heldToolCount > 0 && <span class="held"> ({server.heldToolCount} held)</span>}
      </td>
      <td data-label="Uptime">{server.connectedSince && server.status === 'connected' ? duration(now.value - Date.parse(server.connectedSince)) : '—'}</td>
      <td data-label="PID">{server.pid ?? '—'}</td>
      <Concurrency server={server} />
      <td class="last-error" data-label="Last error">
        {server.lastError ? (
          // A long message (a stack, a URL, a server's whole stderr line) stays three lines high; all of it on hover.
          <div class="clamp" title={`${server.lastError.code}: ${server.lastError.message}`}>
            <code>{server.lastError.code}</code> {server.lastError.message}
          </div>
        ) : (
          '—'
        )}
      </td>
      <td class="actions" data-label="Actions">
        <button type="button" aria-label={`Reload ${server.name}`} onClick={() => act(`Reloading ${server.name}`, () => postJson(`${path}/reload`))}>
          Reload
        </button>
        <button type="button" aria-label={`Disconnect ${server.name}`} onClick={() => act(`Disconnected ${server.name}`, () => postJson(`${path}/disconnect`))}>
          Disconnect
        </button>
        {server.status === 'needs_auth' && (
          <button type="button" aria-label={`Sign in to ${server.name}`} onClick={() => act(`Sign-in for ${server.name} opened`, signIn)}>
            Sign in
          </button>
        )}
      </td>
    </tr>
  );
}

/** Requests running against the limit, whether it adapts or is pinned (why it is what it is on hover), and any waiting. */
function Concurrency({ server }: { server: ServerSnapshot }) {
  const { inFlight, limit, mode, queued, reason } = server.concurrency;
  return (
    <td class="concurrency" data-label="Concurrency" data-limit={limit} data-mode={mode} title={reason}>
      {inFlight} / {limit} <span class={`limit-mode ${mode}`}>{mode}</span>
      {queued > 0 && <span class="queued"> {queued} waiting</span>}
    </td>
  );
}

/** The mark of a server in a bubblewrap sandbox (issue #42); what it may touch on hover. */
function Sandboxed({ sandbox }: { sandbox: NonNullable<ServerSnapshot['sandbox']> }) {
  const title = `sandboxed: reads ${sandbox.read.join(', ')}; writes ${sandbox.write.join(', ')}; network ${sandbox.network}`;
  return (
    <span class="sandboxed" title={title} data-network={sandbox.network}>
      {' '}
      <span aria-hidden="true">🔒</span> sandboxed
    </span>
  );
}
