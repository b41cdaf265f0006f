import type { SharedBucketAnswer, SharedRateLimits } from '../ports.js';
import type { PgBackend } from './pg-backend.js';

/** A heartbeat younger than this is a live replica (three of its 2 s intervals, as `/status` counts). */
const LIVE_MS = 6_000;

/** The bucket refilled up to `now`: what the row holds plus the time since, capped at the capacity. */
const REFILLED = 'LEAST($3::double precision, b.tokens + GREATEST(0, $5::bigint - b.refilled_at) * $4::double precision)';

/**
 * `rate_buckets` in PostgreSQL (issue #43 item 1): one token bucket per agent that every replica
 * takes from, so three replicas taking an agent's calls round robin let through what one would.
 * A take is one statement — insert a full bucket less one, or refill the row by the time since
 * its last take and take one when there is one — atomic under concurrent replicas (the row lock
 * of the upsert). Time is the caller's clock; a replica whose clock is behind the row's refills
 * nothing (never negative). The answer also counts the live replicas: each one's share of the
 * bucket while the database is away.
 */
export class PgRateLimits implements SharedRateLimits {
  readonly #pg: PgBackend;

  constructor(backend: PgBackend) {
    this.#pg = backend;
  }

  take(agent: string, settings: string, capacity: number, perMs: number, now: number): Promise<SharedBucketAnswer | undefined> {
    return this.#pg.read('rate limit take', { agent }, undefined, async () => {
      const { rows } = await this.#pg.query<{ tokens: number; taken: boolean; replicas: string }>(
        `INSERT INTO rate_buckets AS b (agent, settings, tokens, refilled_at, taken) VALUES ($1, $2, $3::double precision - 1, $5, true)
         ON CONFLICT (agent) DO UPDATE SET
           settings = EXCLUDED.settings,
           tokens = CASE WHEN b.settings <> EXCLUDED.settings THEN EXCLUDED.tokens
                         WHEN ${REFILLED} >= 1 THEN ${REFILLED} - 1
                         ELSE ${REFILLED} END,
           taken = b.settings <> EXCLUDED.settings OR ${REFILLED} >= 1,
           refilled_at = GREATEST(b.refilled_at, $5::bigint)
         RETURNING tokens, taken, (SELECT count(*) FROM replicas WHERE heartbeat_at > $6) AS replicas`,
        [agent, settings, capacity, perMs, now, Date.now() - LIVE_MS],
        'switchboard_rate_take',
      );
      const row = rows[0];
      if (!row) return undefined;
      return { taken: row.taken, tokens: Number(row.tokens), replicas: Math.max(1, Number(row.replicas)) };
    });
  }
}
