import { useEffect, useState } from 'preact/hooks';
import { describeError, getJson, postJson } from '../api.js';
import { serverList } from '../state.js';

interface Pending {
  id: string;
  server: string;
  name: string;
  arguments: Record<string, unknown>;
  agent?: string;
  expiresAt: string;
}

interface HeldTool {
  name: string;
  exposedName: string;
  changed: string[];
}

/** Pending approvals (approve / deny) and held tools (approve), reloaded when the feed says they changed. */
export function Approvals({ version }: { version: number }) {
  const [pending, setPending] = useState<Pending[]>([]);
  const [held, setHeld] = useState<Array<{ server: string; tools: HeldTool[] }>>([]);
  const [error, setError] = useState<string | null>(null);
  const [reloads, setReloads] = useState(0);
  const heldServers = serverList.value.filter((s) => s.heldToolCount > 0).map((s) => s.name);
  const heldKey = heldServers.join(',');

  useEffect(() => {
    void (async () => {
      try {
        setPending((await getJson<{ approvals: Pending[] }>('/approvals')).approvals);
        const details = await Promise.all(heldServers.map((name) => getJson<{ name: string; heldTools: HeldTool[] }>(`/servers/${encodeURIComponent(name)}`)));
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
            <li key={p.id} data-approval={p.id}>
              <strong>{p.name}</strong> on {p.server} by {p.agent ?? 'operator'}
              <pre class="json">{JSON.stringify(p.arguments, null, 2)}</pre>
              <button type="button" onClick={() => act(`/approvals/${encodeURIComponent(p.id)}/approve`)}>
                Approve
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
