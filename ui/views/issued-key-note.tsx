import { issuedKey } from '../issued-key.js';

/** The key just made, shown this once, and — for the first key — who needs a key now and where the operator key is. */
export function IssuedKeyNote() {
  const issued = issuedKey.value;
  if (!issued) return null;
  return (
    <div class="issued" role="status">
      <p>
        Key for <strong>{issued.name}</strong> — shown this once, copy it now:
      </p>
      <code class="key" data-key>
        {issued.key}
      </code>
      {issued.firstKey && (
        <p class="hint" data-first-key>
          {issued.firstKey.message}
        </p>
      )}
      <button type="button" onClick={() => (issuedKey.value = null)}>
        Done
      </button>
    </div>
  );
}
