import { useEffect, useState } from 'preact/hooks';
import { describeError, getJson } from '../api.js';
import { servers } from '../state.js';
import { searchSummary } from '../stats.js';
import type { SearchStats, ToolDetail, ToolSummary } from '../types.js';
import { TryForm } from './try-form.js';

/** A catalogue can hold thousands of tools; the list shows this many, search finds the rest. */
const MAX_SHOWN = 200;

/** The Tools view: ranked search (`/tools/search`), a tool's schema and a "try it" form. */
export function ToolsView() {
  const [query, setQuery] = useState('');
  const [tools, setTools] = useState<ToolSummary[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<ToolDetail | null>(null);
  const [stats, setStats] = useState<SearchStats | null>(null);
  // The list follows the catalogue: a server's tool count changing (from the feed) lists again.
  const catalogueKey = [...servers.value.values()].map((s) => `${s.name}:${s.toolCount}`).join(',');

  useEffect(() => {
    let cancelled = false;
    const timer = setTimeout(async () => {
      try {
        const q = query.trim();
        const list =
          q === ''
            ? (await getJson<{ tools: ToolSummary[] }>('/tools')).tools
            : (await getJson<{ tools: ToolSummary[] }>(`/tools/search?q=${encodeURIComponent(q)}&limit=50`)).tools;
        if (!cancelled) {
          setTools(list);
          setError(null);
        }
        // How search does (GET /search/stats, operator only): shown when the key may read it.
        const found = await getJson<SearchStats>('/search/stats').catch(() => null);
        if (!cancelled) setStats(found);
      } catch (err) {
        if (!cancelled) setError(describeError(err));
      }
    }, 150);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [query, catalogueKey]);

  const open = async (name: string) => {
    try {
      setSelected(await getJson<ToolDetail>(`/tools/${encodeURIComponent(name)}`));
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <section aria-labelledby="tools-title" class="split">
      <div class="pane">
        <h2 id="tools-title">Tools</h2>
        <label for="tool-search">Search tools</label>
        <input id="tool-search" type="search" placeholder="what should the tool do?" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        {stats && (
          <p class="muted" data-search-stats>
            {searchSummary(stats)}
          </p>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {tools.length > MAX_SHOWN && (
          <p class="muted">
            Showing {MAX_SHOWN} of {tools.length} tools: search to narrow them down.
          </p>
        )}
        <ul class="tool-list" aria-label="Matching tools">
          {tools.slice(0, MAX_SHOWN).map((tool) => (
            <li key={tool.name}>
              <button
                type="button"
                class={selected?.name === tool.name ? 'tool selected' : 'tool'}
                aria-pressed={selected?.name === tool.name}
                data-tool={tool.name}
                onClick={() => open(tool.name)}
              >
                <strong>{tool.name}</strong>
                <span>{tool.description}</span>
              </button>
            </li>
          ))}
        </ul>
      </div>
      <div class="pane">{selected ? <ToolPanel key={selected.name} tool={selected} /> : <p class="empty">Choose a tool to see its schema and try it.</p>}</div>
    </section>
  );
}

function ToolPanel({ tool }: { tool: ToolDetail }) {
  return (
    <article aria-labelledby="tool-title">
      <h3 id="tool-title">{tool.title ?? tool.name}</h3>
      <p>{tool.description}</p>
      <p class="muted">
        server <code>{tool.server}</code>
      </p>
      <details>
        <summary>Input schema</summary>
        <pre class="json">{JSON.stringify(tool.inputSchema, null, 2)}</pre>
      </details>
      {tool.outputSchema && (
        <details>
          <summary>Output schema</summary>
          <pre class="json">{JSON.stringify(tool.outputSchema, null, 2)}</pre>
        </details>
      )}
      <TryForm tool={tool} />
    </article>
  );
}
