import { randomUUID } from 'node:crypto';
import { SwitchboardError } from '../../errors.js';
import type { AgentRef } from '../agents/agent-ref.js';
import { DEFAULT_SCRIPT_LIMITS, runScript, type ScriptHost, type ScriptLimits, type ScriptOutcome } from './script-sandbox.js';
import { ScriptWorkers } from './script-workers.js';

/** Code mode's settings (issue #39): whether it is on, how many runs at once, each run's limits. */
export interface ScriptSettings {
  /** `codeMode`: `run_script` and `POST /scripts/run` for every caller; an agent's own `codeMode` wins. @default false */
  enabled?: boolean;
  /** Scripts running at once in the daemon; beyond, `SERVER_BUSY`. @default 16 */
  maxRuns?: number;
  /** Scripts of one agent running at once; beyond, `SERVER_BUSY`. @default 4 */
  maxRunsPerAgent?: number;
  /** Each run's sandbox limits. @default DEFAULT_SCRIPT_LIMITS */
  limits?: Partial<ScriptLimits>;
}

/** A running script, as `GET /scripts` shows it to the operator. */
export interface RunningScript {
  id: string;
  agent?: string;
  transport: string;
  startedAt: string;
  /** Tool calls and searches made so far. */
  calls: number;
}

interface Run {
  info: RunningScript;
}

/**
 * The running scripts (issue #39 item 4): admission per daemon and per agent, each run's id, the
 * list the operator reads. A run ends — and leaves the list — however its script ends.
 */
export class ScriptRuns {
  readonly limits: ScriptLimits;
  /** The worker threads the runs take turns in, kept warm between runs. */
  readonly workers: ScriptWorkers;
  readonly #settings: ScriptSettings;
  readonly #agentSetting: (name: string) => boolean | undefined;
  readonly #runs = new Map<string, Run>();

  constructor(settings: ScriptSettings, agentSetting: (name: string) => boolean | undefined, workers = new ScriptWorkers()) {
    this.#settings = settings;
    this.#agentSetting = agentSetting;
    this.limits = { ...DEFAULT_SCRIPT_LIMITS, ...settings.limits };
    this.workers = workers;
  }

  /** Whether `agent` (absent: the operator) may run scripts: its own `codeMode`, else the daemon's. */
  enabledFor(agent: AgentRef | undefined): boolean {
    const own = agent ? this.#agentSetting(agent.name) : undefined;
    return own ?? this.#settings.enabled ?? false;
  }

  list(): RunningScript[] {
    return [...this.#runs.values()].map((run) => ({ ...run.info }));
  }

  get size(): number {
    return this.#runs.size;
  }

  /**
   * Runs `code` for `agent`, or refuses at once: `CODE_MODE_DISABLED` when code mode is off for
   * it, `SERVER_BUSY` when the daemon or the agent has as many scripts running as it may.
   * `hostOf` gives the run's host calls, told the run's id.
   */
  async run(
    code: string,
    timeoutMs: number | undefined,
    agent: AgentRef | undefined,
    transport: string,
    signal: AbortSignal | undefined,
    hostOf: (runId: string) => ScriptHost,
  ): Promise<ScriptOutcome & { runId: string }> {
    if (!this.enabledFor(agent)) throw new SwitchboardError('CODE_MODE_DISABLED');
    const maxRuns = this.#settings.maxRuns ?? 16;
    if (this.#runs.size >= maxRuns)
      throw new SwitchboardError('SERVER_BUSY', `${maxRuns} scripts are running, as many as the daemon runs at once; retry later`, { retryAfterMs: 1000 });
    const perAgent = this.#settings.maxRunsPerAgent ?? 4;
    if (agent && [...this.#runs.values()].filter((run) => run.info.agent === agent.name).length >= perAgent) {
      throw new SwitchboardError('SERVER_BUSY', `Agent "${agent.name}" has ${perAgent} scripts running, as many as it may; retry later`, { retryAfterMs: 1000 });
    }
    const runId = randomUUID();
    const info: RunningScript = { id: runId, ...(agent ? { agent: agent.name } : {}), transport, startedAt: new Date().toISOString(), calls: 0 };
    this.#runs.set(runId, { info });
    const host = hostOf(runId);
    const counted: ScriptHost = {
      tools: host.tools,
      call: (name, args, inner) => {
        info.calls++;
        return host.call(name, args, inner);
      },
      search: (query, inner) => {
        info.calls++;
        return host.search(query, inner);
      },
    };
    const limits = { ...this.limits, timeoutMs: Math.min(timeoutMs ?? this.limits.timeoutMs, this.limits.timeoutMs) };
    try {
      return { ...(await runScript(code, limits, counted, signal, this.workers)), runId };
    } finally {
      this.#runs.delete(runId);
    }
  }

  /** Stops the workers waiting for a run (the daemon's shutdown, once its requests are done). */
  close(): Promise<void> {
    return this.workers.close();
  }
}
