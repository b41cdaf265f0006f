import { MASK } from './redact.js';
import type { ServerConfig } from './types.js';

/**
 * Values shorter than this are not treated as secrets when masking text: a `DEBUG=1` or
 * `MODE=prod` would otherwise mask every "1" and "prod" in the arguments an audit row keeps.
 * @default 6
 */
export const MIN_SECRET_LENGTH = 6;

/** `sbk_<id>_<secret>` agent keys and `sbo_<secret>` operator keys. */
const KEY_SHAPE = /\bsb[ko]_[A-Za-z0-9_-]{20,}/g;

/**
 * The secret values the daemon knows (SPEC §11): every env and header value of each server as
 * resolved for its last connect (`${VAR}` and `!cmd` output included), its OAuth client secret,
 * and the daemon's own token. Used to mask those values wherever text from agents is kept — the
 * audit log's argument values (issue #22 item 4).
 */
/** A compact JWS, as a workload identity token is (and a file path is not). */
export function isJwt(value: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]*$/.test(value);
}

export class SecretValues {
  readonly #byServer = new Map<string, string[]>();
  readonly #fixed: string[];
  /** The JSON-escaped forms of every value, longest first; rebuilt lazily after a change. */
  #patterns: string[] | undefined;
  /** The values as they are, longest first; rebuilt lazily after a change. */
  #rawPatterns: string[] | undefined;

  constructor(fixed: ReadonlyArray<string | undefined> = []) {
    this.#fixed = fixed.filter((value): value is string => value !== undefined);
  }

  /** Records the values of `server`'s resolved config, replacing what it had. */
  remember(server: string, config: ServerConfig): void {
    const values = [...Object.values(config.env ?? {}), ...Object.values(config.headers ?? {})];
    // `Authorization: Bearer <token>`: the token alone is as secret as the whole header value.
    for (const value of Object.values(config.headers ?? {})) {
      const last = value.trim().split(/\s+/).at(-1);
      if (last !== undefined && last !== value) values.push(last);
    }
    if (config.oauth?.clientSecret) values.push(config.oauth.clientSecret);
    // A private key given as the key itself (from `!cmd` or `${VAR}`), not as a file path.
    const key = config.oauth?.privateKeyJwt?.trim();
    if (key && (key.startsWith('-----BEGIN') || key.startsWith('{'))) values.push(key);
    const assertion = config.oauth?.assertion?.trim();
    if (assertion && isJwt(assertion)) values.push(assertion);
    this.#byServer.set(server, values);
    this.#patterns = undefined;
    this.#rawPatterns = undefined;
  }

  /** `text` (JSON) with every known secret value, and anything shaped like a Switchboard key, replaced by `****`. */
  maskJson(text: string): string {
    return maskWith(text, this.patterns());
  }

  /**
   * Plain `text` (a line a server wrote to stderr) with every known secret value, and anything
   * shaped like a Switchboard key, replaced by `****`: a server that prints its own token does not
   * put it in `/servers/:name`, an error or the daemon's log.
   */
  maskText(text: string): string {
    return maskWith(text, (this.#rawPatterns ??= this.values().sort(longestFirst)));
  }

  private patterns(): string[] {
    // Longest first, so a value that contains another is masked whole.
    return (this.#patterns ??= [...new Set(this.values().map((value) => JSON.stringify(value).slice(1, -1)))].sort(longestFirst));
  }

  private values(): string[] {
    const values = new Set<string>();
    for (const value of [...this.#fixed, ...[...this.#byServer.values()].flat()]) {
      if (value.length >= MIN_SECRET_LENGTH) values.add(value);
    }
    return [...values];
  }
}

function longestFirst(a: string, b: string): number {
  return b.length - a.length;
}

function maskWith(text: string, patterns: readonly string[]): string {
  let out = text;
  for (const pattern of patterns) if (out.includes(pattern)) out = out.split(pattern).join(MASK);
  // Agent and operator keys (issue #22) are never known here in clear (only their hashes are
  // kept), so they are recognised by shape.
  return out.includes('sb') ? out.replace(KEY_SHAPE, MASK) : out;
}
