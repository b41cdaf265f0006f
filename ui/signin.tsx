import { useState } from 'preact/hooks';
import { ApiError, describeError, getJson, storeKey } from './api.js';
import { IssuedKeyNote } from './views/issued-key-note.js';

/** Shown when the daemon answered 401: the key is kept in this tab's sessionStorage only. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    storeKey(key.trim());
    try {
      await getJson('/status');
      onSignedIn();
    } catch (err) {
      storeKey(null);
      setError(err instanceof ApiError && err.status === 401 ? 'That key was refused.' : describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="signin" aria-label="Sign in">
      <form onSubmit={submit}>
        <h1>Switchboard</h1>
        <IssuedKeyNote />
        <p>This daemon needs a key. It is kept in this browser tab only.</p>
        <p class="hint">
          Paste the <strong>operator key</strong>: the <code>token</code> in the daemon's config, or — with no token — the contents of <code>operator.key</code> beside its database
          (by default <code>~/.local/state/switchboard/operator.key</code> on the daemon's machine: <code>cat</code> it there). An agent's <code>sbk_…</code> key opens only what
          that agent may see.
        </p>
        <label for="key">Key</label>
        <input id="key" name="key" type="password" autocomplete="current-password" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
