import { useEffect, useState } from 'preact/hooks';
import { describeError, getJson, postJson } from '../api.js';
import { serverList } from '../state.js';
import type { HeldToolView, PendingApproval } from '../types.js';

/** "The same call for 1 h": identical calls of that agent pass until then. */
const SAME_CALL_MS = 60 * 60 * 1000;

/** The approval a `#/approvals/<id>` link names (the link a 2026-07-28 agent's user is given). */
const focusedId = (): string | undefined => {
  const match = /^#\/?approvals\/(.+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]!) : undefined;
};

/**
 * Pending approvals (approve this call, approve the same call for 1 h, deny) and held tools
 * (approve), reloaded when the feed says they changed. `#/approvals/<id>` scrolls to and marks one.
 */
export function Approvals({ version }: { version: number }) {
  const [pending, setPending] = useState<PendingApproval[]>([]);
  const [held, setHeld] = useState<Array<{ server: string; tools: HeldToolView[] }>>([]);
  const [error, setError] = useState<string | null>(null);
  const [reloads, setReloads] = useState(0);
  const heldServers = serverList.value.filter((s) => s.heldToolCount > 0).map((s) => s.name);
  const heldKey = heldServers.join(',');
  const focused = focusedId();

  useEffect(() => {
    if (focused) document.querySelector(`[data-approval="${CSS.escape(focused)}"]`)?.scrollIntoView({ block: 'center' });
  }, [focused, pending]);

  useEffect(() => {
    void (async () => {
      try {
        setPending((await getJson<{ approvals: PendingApproval[] }>('/approvals')).approvals);
        const details = await Promise.all(heldServers.map((name) => getJson<{ name: string; heldTools: HeldToolView[] }>(`/servers/${encodeURIComponent(name)}`)));
        setHeld(details.map((d) => ({ server: d.name, tools: d.heldTools })));
      } catch (err) {
        setError(describeError(err));
      }
    })();
    // heldServers is derived from heldKey.
  }, [version, reloads, heldKey]);

  const act = async (path: string, body: unknown = {}) => {
    setError(null);
    try {
      await postJson(path, body);
      setReloads((n) => n + 1);
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <>
      <h3>Pending approvals</h3>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {pending.length === 0 ? (
        <p class="empty">No call waits for approval.</p>
      ) : (
        <ul class="cards">
          {pending.map((p) => (
            <li key={p.id} data-approval={p.id} class={p.id === focused ? 'focused' : undefined} aria-current={p.id === focused ? 'true' : undefined}>
              <strong>{p.name}</strong> on {p.server} by {p.agent ?? 'operator'}
              {p.rule !== undefined && <span class="rule"> · rule {p.rule}</span>}
              {p.mode === 'input_required' && <span class="mode"> · the agent retries once approved</span>}
              {p.arguments !== undefined ? (
                <pre class="json">{JSON.stringify(p.arguments, null, 2)}</pre>
              ) : (
                <p class="digest" title={p.argumentsDigest}>
                  Arguments not shown (argument audit is off): sha256 {p.argumentsDigest.slice(0, 16)}…
                </p>
              )}
              <button type="button" onClick={() => act(`/approvals/${encodeURIComponent(p.id)}/approve`)}>
                Approve
              </button>
              <button
                type="button"
                title="Identical calls (same agent, tool and arguments) pass for an hour"
                onClick={() => act(`/approvals/${encodeURIComponent(p.id)}/approve`, { forMs: SAME_CALL_MS })}
              >
                Allow the same call for 1 h
              </button>
              <button type="button" onClick={() => act(`/approvals/${encodeURIComponent(p.id)}/deny`)}>
                Deny
              </button>
            </li>
          ))}
        </ul>
      )}
      <h3>Held tools</h3>
      {held.length === 0 ? (
        <p class="empty">No tool is held.</p>
      ) : (
        <ul class="cards">
          {held.flatMap(({ server, tools }) =>
            tools.map((tool) => (
              <li key={`${server}/${tool.name}`}>
                <strong>{tool.exposedName}</strong> on {server} changed: {tool.changed.join(', ')}
                <button type="button" onClick={() => act(`/servers/${encodeURIComponent(server)}/tools/approve`, { tools: [tool.name] })}>
                  Approve
                </button>
              </li>
            )),
          )}
        </ul>
      )}
    </>
  );
}
