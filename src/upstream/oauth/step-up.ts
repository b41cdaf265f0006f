import type { OAuthKey } from '../../store/ports.js';

/**
 * A bounded step-up (issue #29 item 3). A server that answers `403 insufficient_scope` gets a
 * new sign-in for the wider scope — but one that asks again for a scope its last sign-in
 * granted would send a person through sign-ins forever, and so would one that keeps asking for
 * something new. So each server's run of sign-ins is kept: the scope the last one asked for and
 * how many there were in a row (a person's own sign-in starts a run, each step-up adds one).
 */

/** Authorizations in a row for one server, the person's first one included (the suite allows 3). */
export const MAX_SIGN_INS_IN_A_ROW = 3;

interface Run {
  authHash: string;
  scope: Set<string>;
  signIns: number;
}

export class StepUpGuard {
  readonly #runs = new Map<string, Run>();

  /** A sign-in completed, asking for `scope`: a step-up continues the run, any other starts one. */
  signedIn(key: OAuthKey, scope: string, stepUp: boolean): void {
    const run = this.#current(key);
    const signIns = stepUp && run ? run.signIns + 1 : 1;
    this.#runs.set(key.server, { authHash: key.authHash, scope: new Set(scope.split(' ').filter(Boolean)), signIns });
  }

  forget(server: string): void {
    this.#runs.delete(server);
  }

  /**
   * Why a step-up for `challenged` must not be offered, or undefined when it may. `tokenScope`
   * (what the current token says it holds) counts as granted too: after a restart it is all
   * that is known.
   */
  refusal(key: OAuthKey, challenged: string[], tokenScope: string | undefined): string | undefined {
    const run = this.#current(key);
    const granted = new Set([...(run?.scope ?? []), ...(tokenScope ?? '').split(' ').filter(Boolean)]);
    const asked = challenged.join(' ');
    if (challenged.length > 0 && challenged.every((scope) => granted.has(scope))) {
      return (
        `MCP server "${key.server}" refused scope "${asked}" again right after a sign-in granted it; ` +
        'Switchboard stops signing in to it (it would ask forever). Check which scopes the server accepts, then sign in again'
      );
    }
    if ((run?.signIns ?? 1) >= MAX_SIGN_INS_IN_A_ROW) {
      return (
        `MCP server "${key.server}" asked for more scope (now "${asked}") after ${MAX_SIGN_INS_IN_A_ROW} sign-ins in a row; ` +
        'Switchboard stops signing in to it. Check which scopes the server wants, then sign in again'
      );
    }
    return undefined;
  }

  #current(key: OAuthKey): Run | undefined {
    const run = this.#runs.get(key.server);
    return run?.authHash === key.authHash ? run : undefined;
  }
}

/** Whether a response came from the MCP endpoint itself (not its authorization server). */
export function sameEndpoint(responseUrl: string, serverUrl: string): boolean {
  if (!responseUrl) return true;
  try {
    const [a, b] = [new URL(responseUrl), new URL(serverUrl)];
    return a.origin === b.origin && a.pathname === b.pathname;
  } catch {
    return false;
  }
}
