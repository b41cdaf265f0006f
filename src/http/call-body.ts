import { SwitchboardError } from '../errors.js';
import { CallToolBodySchema, parseInput, type CallToolBody } from './schemas.js';

/** The fields a call body may have; anything else is most likely a tool argument sent bare. */
const CALL_FIELDS: ReadonlySet<string> = new Set(['arguments', 'timeoutMs']);

/**
 * Parses the body of `POST /tools/:name/call`. The usual slip is sending the tool's arguments
 * themselves (`{"message": "hi"}`): rather than only "Unknown field", the 400 shows the
 * wrapped form. Keys are named, values never echoed (they may be secrets).
 */
export function parseCallBody(body: unknown): CallToolBody {
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
