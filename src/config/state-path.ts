import { isAbsolute, join } from 'node:path';

/**
 * Where the daemon keeps its state by default, apart from the config loader: the CLI's client
 * commands read the local operator key beside the database and must not load the config schema
 * (zod, the policy language) to find it.
 */

/** `$XDG_STATE_HOME/switchboard/switchboard.db`, else `~/.local/state/switchboard/switchboard.db`. */
export function defaultDbPath(home: string, env: Readonly<Record<string, string | undefined>>): string {
  const state = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(home, '.local', 'state');
  return join(state, 'switchboard', 'switchboard.db');
}
