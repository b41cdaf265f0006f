import { getJson } from './api.js';
import { CALL_WINDOW_MS, calls } from './state.js';
import type { AuditEntryBody, CallFinished } from './types.js';

type AuditRow = Pick<AuditEntryBody, 'time' | 'server' | 'name' | 'outcome' | 'durationMs'>;

/** A finished call, the same from the audit log and from the feed (both carry the one record). */
const keyOf = (call: Pick<CallFinished, 'server' | 'name' | 'outcome' | 'durationMs'>): string => `${call.server}\u0000${call.name}\u0000${call.outcome}\u0000${call.durationMs}`;

/**
 * Fills the Calls view with the calls of the last minutes from the audit log (`GET /audit`), so
 * its charts cover the time before the page opened and not only what the feed brings after.
 * Without the log (`audit.enabled: false`, or an agent's key, which may not read it) the view
 * shows the calls since the page opened, as before.
 */
export async function loadCallHistory(): Promise<void> {
  let rows: AuditRow[];
  try {
    rows = (await getJson<{ entries: AuditRow[] }>(`/audit?since=${Date.now() - CALL_WINDOW_MS}&limit=1000`)).entries;
  } catch {
    return;
  }
  // Calls the feed brought while the log was read are there already: each once.
  const seen = new Set(calls.value.map(keyOf));
  const older: CallFinished[] = [];
  for (const row of rows.reverse()) {
    if (seen.has(keyOf(row))) continue;
    const ended = new Date(Date.parse(row.time) + row.durationMs).toISOString();
    older.push({ type: 'call.finished', seq: 0, ts: ended, server: row.server, name: row.name, outcome: row.outcome, durationMs: row.durationMs });
  }
  calls.value = [...older, ...calls.value];
}
