import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERROR_META_KEY } from '../../upstream/catalogue/tool-bridge.js';
import type { ScriptOutcome } from './script-sandbox.js';

/** Where a run's id travels in `/mcp` results' `_meta`. */
export const RUN_META_KEY = 'switchboard/run';

/**
 * A run as `run_script` answers it: the value as JSON text, then what `console.log` printed; a
 * failure is an `isError` result with its code and the script's line. Nothing else of the run —
 * no inner result — reaches the agent.
 */
export function scriptToolResult(outcome: ScriptOutcome & { runId: string }): CallToolResult {
  const logs = outcome.logs.length > 0 ? `\n\nconsole:\n${outcome.logs.join('\n')}${outcome.logsCut ? '\n… (output cut at its limit)' : ''}` : '';
  const run = { id: outcome.runId, calls: outcome.calls };
  if (outcome.ok) return { content: [{ type: 'text', text: `${JSON.stringify(outcome.value)}${logs}` }], _meta: { [RUN_META_KEY]: run } };
  const { code, message, line } = outcome.error;
  const where = line !== undefined ? ` (line ${line})` : '';
  return {
    content: [{ type: 'text', text: `${code}${where}: ${message}${logs}` }],
    isError: true,
    _meta: { [ERROR_META_KEY]: { code, ...(line !== undefined ? { line } : {}) }, [RUN_META_KEY]: run },
  };
}

/** A run as `POST /scripts/run` answers it: `{runId, calls, value, logs}` or `{runId, calls, error, logs}`. */
export function scriptRestResult(outcome: ScriptOutcome & { runId: string }): Record<string, unknown> {
  const base = { runId: outcome.runId, calls: outcome.calls, logs: outcome.logs, ...(outcome.logsCut ? { logsCut: true } : {}) };
  return outcome.ok ? { ...base, value: outcome.value } : { ...base, error: outcome.error };
}
