import { useState } from 'preact/hooks';
import { clockTime } from '../format.js';
import { feed } from '../state.js';
import type { FeedEvent } from '../types.js';

/** What a row says beyond its type and server. */
function summary(event: FeedEvent): string {
  switch (event.type) {
    case 'server.status':
      return `${String(event.previous)} → ${String(event.status)}${event.error ? ` (${(event.error as { code: string }).code})` : ''}`;
    case 'tools.changed':
      return `${String(event.cause)}: +${(event.added as unknown[]).length} −${(event.removed as unknown[]).length}, ${String(event.toolCount)} tools`;
    case 'call.finished':
      return `${String(event.name)} ${String(event.outcome)} in ${Math.round(event.durationMs as number)} ms`;
    case 'server.log':
      return (event.lines as string[]).join(' ⏎ ');
    default: {
      const { seq: _seq, ts: _ts, type: _type, server: _server, ...rest } = event;
      return JSON.stringify(rest);
    }
  }
}

/** The Events view: the live feed, filtered by type and server, with pause. */
export function EventsView() {
  const [type, setType] = useState('');
  const [server, setServer] = useState('');
  const [paused, setPaused] = useState<readonly FeedEvent[] | null>(null);
  const all = paused ?? feed.value;
  const types = [...new Set(feed.value.map((e) => e.type))].sort();
  const serverNames = [...new Set(feed.value.map((e) => e.server).filter((s): s is string => typeof s === 'string' && s !== ''))].sort();
  const shown = all
    .filter((e) => (type === '' || e.type === type) && (server === '' || e.server === server))
    .slice(-300)
    .reverse();

  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <div class="filters">
        <label for="event-type">Type</label>
        <select id="event-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
          <option value="">all</option>
          {types.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
        <label for="event-server">Server</label>
        <select id="event-server" value={server} onChange={(e) => setServer(e.currentTarget.value)}>
          <option value="">all</option>
          {serverNames.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <button type="button" aria-pressed={paused !== null} onClick={() => setPaused(paused ? null : feed.value)}>
          {paused ? `Resume (${feed.value.length - paused.length} new)` : 'Pause'}
        </button>
      </div>
      <div class="table-wrap">
        <table class="events">
          <caption class="sr-only">Events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Seq</th>
              <th scope="col">Time</th>
              <th scope="col">Type</th>
              <th scope="col">Server</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody aria-live={paused ? 'off' : 'polite'} aria-relevant="additions">
            {shown.map((event) => (
              <tr key={event.seq} data-seq={event.seq} data-type={event.type}>
                <td>{event.seq}</td>
                <td>{clockTime(event.ts)}</td>
                <td>{event.type}</td>
                <td>{typeof event.server === 'string' ? event.server : '—'}</td>
                <td class="details">{summary(event)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {shown.length === 0 && <p class="empty">No events yet.</p>}
    </section>
  );
}
