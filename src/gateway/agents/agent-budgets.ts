import { SwitchboardError } from '../../errors.js';
import type { BudgetStore } from '../../store/ports.js';
import type { Clock } from '../../util/clock.js';

/** An agent's `budget` (issue #38 item 4). */
export interface BudgetLimits {
  tokensPerHour?: number | undefined;
  tokensPerDay?: number | undefined;
}

/** One window of a budget as `GET /agents` and `/metrics` show it. */
export interface BudgetWindow {
  limit: number;
  spent: number;
  left: number;
  /** When this window's count starts again from zero (ISO). */
  resetsAt: string;
}

export interface BudgetStatus {
  hour?: BudgetWindow;
  day?: BudgetWindow;
}

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

interface Window {
  name: 'hour' | 'day';
  key: string;
  endsAt: number;
  limit: number;
}

/**
 * Token budgets per agent (SPEC §19, issue #38 item 4): the tokens the gateway hands an agent —
 * tool definitions and results after the guard — counted per clock hour and per UTC day in the
 * store, so every replica on one database counts into one budget. Over a budget, its calls are
 * refused with `BUDGET_EXCEEDED` until the window turns (its `retryAfterMs`); lists still answer
 * and are still counted. Windows are fixed (the hour, the day), so the reset time is exact and
 * the same on every replica.
 */
export class AgentBudgets {
  /** The counts last answered by the store, per agent: what `/metrics` shows without a query. */
  readonly #last = new Map<string, Record<string, number>>();

  constructor(
    private readonly store: BudgetStore,
    private readonly clock: Clock,
    private readonly limitsOf: (agent: string) => BudgetLimits | undefined,
  ) {}

  /** Whether `agent` has a budget (only then is anything counted or checked). */
  has(agent: string): boolean {
    const limits = this.limitsOf(agent);
    return limits?.tokensPerHour !== undefined || limits?.tokensPerDay !== undefined;
  }

  /** Refuses with `BUDGET_EXCEEDED` (and when it resets) when a window of the agent's budget is spent. */
  async check(agent: string): Promise<void> {
    const windows = this.#windows(agent);
    if (windows.length === 0) return;
    const counts = await this.store.spent(
      agent,
      windows.map((w) => w.key),
    );
    this.#last.set(agent, counts);
    const spent = windows.filter((w) => (counts[w.key] ?? 0) >= w.limit);
    if (spent.length === 0) return;
    const resetsAt = Math.max(...spent.map((w) => w.endsAt));
    const names = spent.map((w) => `${w.limit} tokens per ${w.name}`).join(' and ');
    throw new SwitchboardError('BUDGET_EXCEEDED', `Agent ${agent} has spent its budget of ${names}; it resets at ${new Date(resetsAt).toISOString()}`, {
      retryAfterMs: Math.max(1, resetsAt - this.clock.now()),
    });
  }

  /** Counts `tokens` handed to `agent` (never refuses: what was handed is spent). */
  async charge(agent: string, tokens: number): Promise<void> {
    const windows = this.#windows(agent);
    if (windows.length === 0 || tokens <= 0) return;
    this.#last.set(
      agent,
      await this.store.add(
        agent,
        windows.map((w) => w.key),
        Math.ceil(tokens),
        this.clock.now(),
      ),
    );
  }

  /** The agent's windows: limit, spent, left and reset, read from the store. */
  async status(agent: string): Promise<BudgetStatus | undefined> {
    const windows = this.#windows(agent);
    if (windows.length === 0) return undefined;
    const counts = await this.store.spent(
      agent,
      windows.map((w) => w.key),
    );
    this.#last.set(agent, counts);
    return this.#statusOf(windows, counts);
  }

  /** The last known status of every agent with a budget, without a query (for `/metrics`). */
  known(): Array<{ agent: string; status: BudgetStatus }> {
    const out: Array<{ agent: string; status: BudgetStatus }> = [];
    for (const [agent, counts] of this.#last) {
      const windows = this.#windows(agent);
      if (windows.length > 0) out.push({ agent, status: this.#statusOf(windows, counts) });
    }
    return out;
  }

  #statusOf(windows: Window[], counts: Record<string, number>): BudgetStatus {
    const status: BudgetStatus = {};
    for (const w of windows) {
      const spent = counts[w.key] ?? 0;
      status[w.name] = { limit: w.limit, spent, left: Math.max(0, w.limit - spent), resetsAt: new Date(w.endsAt).toISOString() };
    }
    return status;
  }

  #windows(agent: string): Window[] {
    const limits = this.limitsOf(agent);
    if (!limits) return [];
    const now = this.clock.now();
    const iso = new Date(now).toISOString();
    const windows: Window[] = [];
    if (limits.tokensPerHour !== undefined)
      windows.push({ name: 'hour', key: `h:${iso.slice(0, 13)}`, endsAt: Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS, limit: limits.tokensPerHour });
    if (limits.tokensPerDay !== undefined)
      windows.push({ name: 'day', key: `d:${iso.slice(0, 10)}`, endsAt: Math.floor(now / DAY_MS) * DAY_MS + DAY_MS, limit: limits.tokensPerDay });
    return windows;
  }
}
