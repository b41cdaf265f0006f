import { signal } from '@preact/signals';

/** A key just made, shown once; with `firstKey` when it was the daemon's first (issue #36 item 5). */
export interface IssuedKey {
  name: string;
  key: string;
  firstKey?: { message: string; operatorKeyFile?: string };
}

/**
 * The key the Agents view just made. Kept outside the view because the first key of a daemon
 * without a token locks this very tab out: its next request gets 401 and the sign-in form takes
 * the page, which must still show the key (shown once) and where the operator key is.
 */
export const issuedKey = signal<IssuedKey | null>(null);
