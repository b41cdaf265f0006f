import { useEffect, useState } from 'preact/hooks';
import { describeError, getJson, postJson, request } from '../api.js';
import { clockTime } from '../format.js';
import { issuedKey, type IssuedKey } from '../issued-key.js';
import { approvalsVersion, auditVersion } from '../state.js';
import { IssuedKeyNote } from './issued-key-note.js';
import { Approvals } from './approvals.js';
import type { AgentRow, AuditEntryBody } from '../types.js';

/** "1 234 / 50 000 this hour, resets 13:00" per window of an agent's budget; "—" without one. */
function budgetText(agent: AgentRow): string {
  const windows = (['hour', 'day'] as const).flatMap((name) => {
    const w = agent.spent?.[name];
    return w ? [`${w.spent.toLocaleString()} / ${w.limit.toLocaleString()} this ${name}, resets ${clockTime(w.resetsAt)}`] : [];
  });
  return windows.length > 0 ? windows.join('; ') : '—';
}

/** The create form's scope fields, as typed. */
interface Scope {
  servers: string;
  tools: string;
  access: string;
  catalogue: string;
}
const NO_SCOPE: Scope = { servers: '', tools: '', access: 'all', catalogue: '' };

/** The settings of `POST /agents` from the form: comma-separated globs; defaults left out. */
function settingsOf(scope: Scope): Record<string, unknown> {
  const globs = (text: string): string[] =>
    text
      .split(',')
      .map((glob) => glob.trim())
      .filter((glob) => glob !== '');
  const servers = globs(scope.servers);
  const tools = globs(scope.tools);
  return {
    ...(servers.length > 0 ? { servers } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(scope.access !== 'all' ? { access: scope.access } : {}),
    ...(scope.catalogue !== '' ? { catalogue: scope.catalogue } : {}),
  };
}

/** Agents and keys (create shows the key once, revoke), pending approvals, held tools and the audit table. */
export function AgentsView() {
  const [agents, setAgents] = useState<AgentRow[]>([]);
  const [audit, setAudit] = useState<AuditEntryBody[]>([]);
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>(NO_SCOPE);
  const [error, setError] = useState<string | null>(null);
  const [reloads, setReloads] = useState(0);
  const version = approvalsVersion.value;
  const audited = auditVersion.value;

  useEffect(() => {
    getJson<{ agents: AgentRow[] }>('/agents').then(
      (body) => setAgents(body.agents),
      (err: unknown) => setError(describeError(err)),
    );
  }, [version, reloads]);

  useEffect(() => {
    getJson<{ entries: AuditEntryBody[] }>('/audit?limit=50').then(
      (body) => setAudit(body.entries),
      (err: unknown) => setError(describeError(err)),
    );
  }, [version, audited]);

  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const added = await postJson<{ agent: AgentRow } & Omit<IssuedKey, 'name'>>('/agents', { name: name.trim(), ...settingsOf(scope) });
      issuedKey.value = { name: added.agent.name, key: added.key, ...(added.firstKey ? { firstKey: added.firstKey } : {}) };
      setName('');
      setScope(NO_SCOPE);
      setReloads((n) => n + 1);
    } catch (err) {
      setError(describeError(err));
    }
  };

  const revoke = async (agent: string) => {
    setError(null);
    try {
      await request(`/agents/${encodeURIComponent(agent)}`, { method: 'DELETE' });
      setReloads((n) => n + 1);
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <section aria-labelledby="agents-title">
      <h2 id="agents-title">Agents</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <form class="inline" onSubmit={create} aria-label="Add an agent">
        <label for="agent-name">New agent</label>
        <input id="agent-name" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,63}" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="agent-servers">Servers</label>
        <input id="agent-servers" placeholder="all (or globs: github, git*)" value={scope.servers} onInput={(e) => setScope({ ...scope, servers: e.currentTarget.value })} />
        <label for="agent-tools">Tools</label>
        <input id="agent-tools" placeholder="all of its servers" value={scope.tools} onInput={(e) => setScope({ ...scope, tools: e.currentTarget.value })} />
        <label for="agent-access">Access</label>
        <select id="agent-access" value={scope.access} onChange={(e) => setScope({ ...scope, access: e.currentTarget.value })}>
          <option value="all">all</option>
          <option value="read">read</option>
          <option value="write">write</option>
        </select>
        <label for="agent-catalogue">Catalogue</label>
        <select id="agent-catalogue" value={scope.catalogue} onChange={(e) => setScope({ ...scope, catalogue: e.currentTarget.value })}>
          <option value="">the daemon's</option>
          <option value="full">full</option>
          <option value="search">search</option>
          <option value="auto">auto</option>
        </select>
        <button type="submit">Create key</button>
      </form>
      <IssuedKeyNote />
      <div class="table-wrap">
        <table class="agents">
          <caption class="sr-only">Agents</caption>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Status</th>
              <th scope="col">Source</th>
              <th scope="col">Servers</th>
              <th scope="col">Access</th>
              <th scope="col">Tokens</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {agents.map((agent) => (
              <tr key={agent.name} data-agent={agent.name} data-status={agent.status}>
                <th scope="row">{agent.name}</th>
                <td>{agent.status}</td>
                <td>{agent.source}</td>
                <td>{agent.servers?.join(', ') ?? 'all'}</td>
                <td>{agent.access ?? 'all'}</td>
                <td class={agent.spent && Object.values(agent.spent).some((w) => w.left === 0) ? 'bad' : undefined}>{budgetText(agent)}</td>
                <td>
                  {agent.status === 'active' && !agent.keyInConfig && (
                    <button type="button" aria-label={`Revoke ${agent.name}`} onClick={() => revoke(agent.name)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {agents.length === 0 && <p class="empty">No agents.</p>}
      <Approvals version={version} />
      <h3 id="audit-title">Audit</h3>
      <div class="table-wrap">
        <table class="audit" aria-labelledby="audit-title">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Agent</th>
              <th scope="col">Kind</th>
              <th scope="col">Name</th>
              <th scope="col">Outcome</th>
              <th scope="col">Duration</th>
            </tr>
          </thead>
          <tbody>
            {audit.map((entry) => (
              <tr key={entry.id}>
                <td>{clockTime(entry.time)}</td>
                <td>{entry.agent ?? 'operator'}</td>
                <td>{entry.kind}</td>
                <td>{entry.name}</td>
                <td class={entry.outcome === 'ok' ? undefined : 'bad'}>
                  {entry.outcome}
                  {entry.code ? ` (${entry.code})` : ''}
                </td>
                <td>{Math.round(entry.durationMs)} ms</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {audit.length === 0 && <p class="empty">No audited requests yet.</p>}
    </section>
  );
}
