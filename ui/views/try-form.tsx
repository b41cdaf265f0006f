import { useRef, useState } from 'preact/hooks';
import { describeError } from '../api.js';
import { streamCall, type Progress } from '../call-stream.js';
import type { CallResult, JsonSchema, ToolDetail } from '../types.js';
import { ResultView } from './result-view.js';

type Kind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

function kindOf(schema: JsonSchema): Kind {
  if (Array.isArray(schema.enum)) return 'enum';
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') return type;
  return 'json';
}

/** The form's raw values back to arguments; a field left empty is left out (the server's default applies). */
function argumentsOf(properties: Record<string, JsonSchema>, values: Record<string, string | boolean>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const value = values[name];
    if (value === undefined || value === '') continue;
    const kind = kindOf(schema);
    if (kind === 'boolean') args[name] = value === true;
    else if (kind === 'number' || kind === 'integer') args[name] = Number(value);
    else if (kind === 'json') args[name] = JSON.parse(String(value)) as unknown;
    else if (kind === 'enum') args[name] = JSON.parse(String(value)) as unknown;
    else args[name] = value;
  }
  return args;
}

/** "Try it": a form generated from the tool's input schema; progress live, cancel, the result by content type. */
export function TryForm({ tool }: { tool: ToolDetail }) {
  const properties = tool.inputSchema.properties ?? {};
  const required = new Set(tool.inputSchema.required ?? []);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [progress, setProgress] = useState<Progress | null>(null);
  const [result, setResult] = useState<CallResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const controller = useRef<AbortController | null>(null);

  const run = async (event: Event) => {
    event.preventDefault();
    setResult(null);
    setError(null);
    setProgress(null);
    let args: Record<string, unknown>;
    try {
      args = argumentsOf(properties, values);
    } catch (err) {
      return setError(`Not valid JSON: ${describeError(err)}`);
    }
    const abort = new AbortController();
    controller.current = abort;
    setRunning(true);
    try {
      setResult(await streamCall(tool.name, args, setProgress, abort.signal));
    } catch (err) {
      setError(abort.signal.aborted ? 'Cancelled.' : describeError(err));
    } finally {
      controller.current = null;
      setRunning(false);
    }
  };

  const set = (name: string, value: string | boolean) => setValues((current) => ({ ...current, [name]: value }));

  return (
    <form class="try" onSubmit={run} aria-label={`Try ${tool.name}`}>
      <h4>Try it</h4>
      {Object.entries(properties).map(([name, schema]) => {
        const id = `arg-${name}`;
        const kind = kindOf(schema);
        const label = (
          <label for={id}>
            {name}
            {required.has(name) ? ' *' : ''} <span class="muted">{kind === 'json' ? 'JSON' : kind}</span>
          </label>
        );
        const hint = schema.description ? <small id={`${id}-hint`}>{schema.description}</small> : null;
        const described = schema.description ? `${id}-hint` : undefined;
        if (kind === 'boolean') {
          return (
            <div class="field check" key={name}>
              <input id={id} type="checkbox" checked={values[name] === true} aria-describedby={described} onChange={(e) => set(name, e.currentTarget.checked)} />
              {label}
              {hint}
            </div>
          );
        }
        return (
          <div class="field" key={name}>
            {label}
            {kind === 'enum' ? (
              <select id={id} aria-describedby={described} value={String(values[name] ?? '')} onChange={(e) => set(name, e.currentTarget.value)}>
                <option value="">—</option>
                {(schema.enum ?? []).map((option) => (
                  <option key={JSON.stringify(option)} value={JSON.stringify(option)}>
                    {String(option)}
                  </option>
                ))}
              </select>
            ) : kind === 'json' ? (
              <textarea id={id} rows={3} aria-describedby={described} value={String(values[name] ?? '')} onInput={(e) => set(name, e.currentTarget.value)} />
            ) : kind === 'string' ? (
              <input id={id} type="text" aria-describedby={described} value={String(values[name] ?? '')} onInput={(e) => set(name, e.currentTarget.value)} />
            ) : (
              <input
                id={id}
                type="number"
                step={kind === 'integer' ? 1 : 'any'}
                aria-describedby={described}
                value={String(values[name] ?? '')}
                onInput={(e) => set(name, e.currentTarget.value)}
              />
            )}
            {hint}
          </div>
        );
      })}
      <div class="buttons">
        <button type="submit" disabled={running}>
          Call
        </button>
        <button type="button" disabled={!running} onClick={() => controller.current?.abort()}>
          Cancel
        </button>
      </div>
      {running && (
        <div class="progress" role="status" aria-live="polite">
          <progress aria-label="Call progress" {...(progress?.total ? { max: progress.total, value: progress.progress } : {})} />
          <span data-progress={progress?.progress ?? ''}>
            {progress ? `${progress.progress}${progress.total ? ` / ${progress.total}` : ''}${progress.message ? ` — ${progress.message}` : ''}` : 'Running…'}
          </span>
        </div>
      )}
      {error && (
        <p class="error call-error" role="alert">
          {error}
        </p>
      )}
      {result && <ResultView result={result} />}
    </form>
  );
}
