import { errorMessage, SwitchboardError } from '../../errors.js';
import { loadedSdk } from '../sdk.js';

/**
 * The SDK stamps every error that escapes its transport's auth seam (the 401 handling, a
 * step-up, an `auth()` run) with this registered symbol. It is not exported by name in 2.4.0,
 * but `Symbol.for` keys are global by design.
 */
const AUTH_SEAM = Symbol.for('mcp.authSeamEscape');

function isAuthSeamEscape(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[AUTH_SEAM] === true;
}

/**
 * Thrown from the provider instead of offering a sign-in a server would only refuse again
 * (issue #29 item 3): it asks for a scope its last sign-in granted, or for more scope too many
 * times in a row. Nothing a person does now helps; the server fails with `UPSTREAM_AUTH_FAILED`.
 */
export class StepUpRefusedError extends Error {
  override readonly name = 'StepUpRefusedError';
}

/** The refusal behind `err`, which the SDK may have wrapped on its way out. */
function stepUpRefusalIn(err: unknown): StepUpRefusedError | undefined {
  for (let current = err, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof StepUpRefusedError) return current;
  }
  return undefined;
}

export function isStepUpRefusal(err: unknown): boolean {
  return err instanceof SwitchboardError && err.code === 'UPSTREAM_AUTH_FAILED' && stepUpRefusalIn(err) !== undefined;
}

/** What the daemon tells a person about a server that waits for sign-in; never the URL. */
export function signInHint(server: string): string {
  return `MCP server "${server}" needs you to sign in: run "switchboard login ${server}"`;
}

/**
 * Maps what the SDK throws out of its OAuth handling to our codes (STYLE rule 3):
 * `UPSTREAM_AUTH_REQUIRED` when the server refused us and only a person can fix it (no token,
 * a rejected refresh token, more scope wanted), `UPSTREAM_AUTH_FAILED` when the sign-in
 * machinery itself failed (discovery, registration, an authorization server error). Anything
 * that did not come through the auth seam is left alone: a 401 on a connection without an OAuth
 * provider (static credentials) is an ordinary connect failure.
 */
export function authErrorOf(err: unknown, server: string, unattended = false): SwitchboardError | undefined {
  const refusal = stepUpRefusalIn(err);
  if (refusal) return new SwitchboardError('UPSTREAM_AUTH_FAILED', refusal.message, { cause: refusal });
  // An error of the SDK's exists only once it is loaded.
  const loaded = loadedSdk();
  if (!loaded) return undefined;
  const { SdkErrorCode, SdkHttpError, UnauthorizedError } = loaded;
  if (!isAuthSeamEscape(err) && !(err instanceof UnauthorizedError)) return undefined;
  if (err instanceof UnauthorizedError || (err instanceof SdkHttpError && err.code === SdkErrorCode.ClientHttpAuthentication)) {
    // Unattended (client credentials) there is nobody to sign in: a refusal is a failure to fix in the config.
    if (unattended) {
      return new SwitchboardError('UPSTREAM_AUTH_FAILED', `MCP server "${server}" refused the token its authorization server issued for the client credentials`, { cause: err });
    }
    return new SwitchboardError('UPSTREAM_AUTH_REQUIRED', signInHint(server), { cause: err });
  }
  return new SwitchboardError('UPSTREAM_AUTH_FAILED', `Signing in to MCP server "${server}" failed: ${errorMessage(err)}`, { cause: err });
}
