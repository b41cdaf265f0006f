import { SwitchboardError } from '../errors.js';
import { MAX_TIMER_MS } from '../util/abort.js';
import { CallToolBodySchema, parseInput, type CallToolBody } from './schemas.js';

/** The fields a call body may have; anything else is most likely a tool argument sent bare. */
const CALL_FIELDS: ReadonlySet<string> = new Set(['arguments', 'timeoutMs']);

/**
 * Parses the body of `POST /tools/:name/call`. The usual slip is sending the tool's arguments
 * themselves (`{"message": "hi"}`): rather than only "Unknown field", the 400 shows the
 * wrapped form. Keys are named, values never echoed (they may be secrets).
 */
export function parseCallBody(body: unknown): CallToolBody {
  const valid = validCallBody(body);
  if (valid) return valid;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const stray = Object.keys(body).filter((key) => !CALL_FIELDS.has(key));
    if (stray.length > 0) {
      const wrapped = stray.map((key) => `${JSON.stringify(key)}: …`).join(', ');
      throw new SwitchboardError(
        'VALIDATION_FAILED',
        `${stray[0]}: Unknown field. Tool arguments go inside "arguments": send {"arguments": {${wrapped}}} (the body may also carry "timeoutMs")`,
      );
    }
  }
  return parseInput(CallToolBodySchema, body, 'body');
}

/**
 * A body `CallToolBodySchema` accepts as it is, recognised without zod (issue #27: the schema was a
 * few per cent of a REST call's CPU): a plain object with at most `arguments` (a plain object) and
 * `timeoutMs` (a positive integer within the timer's range). Anything else — an error or an edge
 * case — is left to the schema, so every refusal reads as before. The arguments object is passed
 * on as parsed, not copied (an own `__proto__` key is left to the schema, which drops it).
 */
function validCallBody(body: unknown): CallToolBody | undefined {
  if (!isPlainObject(body)) return undefined;
  let fields = 0;
  const { arguments: args, timeoutMs } = body as CallToolBody;
  if (args !== undefined) {
    if (!isPlainObject(args) || Object.hasOwn(args, '__proto__')) return undefined;
    fields += 1;
  }
  if (timeoutMs !== undefined) {
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS) return undefined;
    fields += 1;
  }
  if (Object.keys(body).length !== fields) return undefined;
  return body as CallToolBody;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
