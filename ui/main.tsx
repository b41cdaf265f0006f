import { signal } from '@preact/signals';
import { render } from 'preact';
import { needsKey } from './api.js';
import { loadCallHistory } from './call-history.js';
import { feedStatus, startFeed, stopFeed } from './feed.js';
import { clusterView, daemonState, refreshStatus } from './state.js';
import { SignIn } from './signin.js';
import { AgentsView } from './views/agents.js';
import { CallsView } from './views/calls.js';
import { ClusterView } from './views/cluster.js';
import { EventsView } from './views/events.js';
import { PoliciesView } from './views/policies.js';
import { ServersView } from './views/servers.js';
import { ToolsView } from './views/tools.js';
import './app.css';

const VIEWS = [
  { id: 'servers', label: 'Servers', render: () => <ServersView /> },
  { id: 'tools', label: 'Tools', render: () => <ToolsView /> },
  { id: 'events', label: 'Events', render: () => <EventsView /> },
  { id: 'calls', label: 'Calls', render: () => <CallsView /> },
  { id: 'agents', label: 'Agents', render: () => <AgentsView /> },
  { id: 'policies', label: 'Policies', render: () => <PoliciesView /> },
  { id: 'cluster', label: 'Cluster', render: () => <ClusterView /> },
] as const;

/** The view is in the URL's fragment, so the browser's back button and bookmarks work. */
const viewOf = (): string => location.hash.replace(/^#\/?/, '') || 'servers';
const current = signal(viewOf());
addEventListener('hashchange', () => (current.value = viewOf()));

/** The safety net under the live feed: one `/status` read a minute. */
const SAFETY_REFRESH_MS = 60_000;

/** A view's own path: `#/approvals/<id>` (the link a 2026-07-28 agent is given) is the Agents view, where approvals are decided. */
const viewIdOf = (path: string): string => {
  const head = path.split('/')[0] ?? '';
  return head === 'approvals' ? 'agents' : head;
};

function App() {
  if (needsKey.value) return <SignIn onSignedIn={start} />;
  // The Cluster view is there only on a replica of one (a PostgreSQL store).
  const views = VIEWS.filter((v) => v.id !== 'cluster' || clusterView.value !== null);
  const view = views.find((v) => v.id === viewIdOf(current.value)) ?? views[0]!;
  const state = daemonState.value;
  return (
    <>
      <header class="top">
        <h1>Switchboard</h1>
        <nav aria-label="Views">
          {views.map((v) => (
            <a key={v.id} href={`#/${v.id}`} aria-current={v.id === view.id ? 'page' : undefined}>
              {v.label}
            </a>
          ))}
        </nav>
        <p class="feed-status" role="status" data-feed={feedStatus.value}>
          <span class={`dot ${feedStatus.value}`} aria-hidden="true" />
          {feedStatus.value === 'live' ? 'Live' : feedStatus.value === 'reconnecting' ? 'Reconnecting…' : 'Connecting…'}
          {state ? ` · v${state.version}` : ''}
        </p>
      </header>
      <main id="main" aria-label={view.label}>
        {view.render()}
      </main>
    </>
  );
}

function start(): void {
  needsKey.value = false;
  stopFeed();
  void refreshStatus().then(() => {
    if (needsKey.value) return;
    startFeed();
    void loadCallHistory();
  });
}

setInterval(() => {
  if (!needsKey.value) void refreshStatus();
}, SAFETY_REFRESH_MS);

start();
render(<App />, document.getElementById('app')!);
