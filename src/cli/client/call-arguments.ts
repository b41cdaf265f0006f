import { isRecord } from './daemon-client.js';
import { UsageError } from './command.js';

/**
 * The arguments of `switchboard call <tool> …`: one JSON object (`'{"message":"hi"}'`), or
 * `key=value` pairs typed by the tool's input schema (`message=hi count=3 verbose=true`), with
 * `key:=<json>` to give any value as JSON (`tags:='["a","b"]'`).
 */

/** The words after the tool name are pairs, not one JSON object. */
export function isKeyValueForm(words: readonly string[]): boolean {
  return words.length > 0 && !(words.length === 1 && /^\s*[{[]/.test(words[0]!)) && words.every((w) => KEY_VALUE.test(w));
}

/** `name=value` or `name:=json`; the name may hold anything but `=` (and `:` right before it). */
const KEY_VALUE = /^[^=]+=/s;

/** `json-args` must be a JSON object; none means `{}`. */
export function parseToolArguments(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new UsageError(`invalid JSON arguments: ${err instanceof Error ? err.message : String(err)} (or give them as key=value pairs)`);
  }
  if (!isRecord(parsed)) throw new UsageError('invalid JSON arguments: expected a JSON object like {"key": "value"}');
  return parsed;
}

/**
 * `key=value` pairs as the tool's arguments, each value converted to the type the tool's input
 * schema gives its property: a number, a boolean, or JSON for an object or array. A property the
 * schema does not type (or does not name) stays a string.
 */
export function parseKeyValueArguments(words: readonly string[], inputSchema: unknown): Record<string, unknown> {
  const properties = isRecord(inputSchema) && isRecord(inputSchema.properties) ? inputSchema.properties : {};
  const args: Record<string, unknown> = {};
  for (const word of words) {
    const eq = word.indexOf('=');
    const asJson = eq > 0 && word[eq - 1] === ':';
    const key = word.slice(0, asJson ? eq - 1 : eq);
    const raw = word.slice(eq + 1);
    if (key === '') throw new UsageError(`invalid argument "${word}": expected key=value`);
    if (Object.hasOwn(args, key)) throw new UsageError(`argument "${key}" given twice`);
    args[key] = asJson ? parseJsonValue(key, raw) : convert(key, raw, typesOf(properties[key]));
  }
  return args;
}

/** The JSON Schema `type`s a property allows (`type: ["string", "null"]` included); none when untyped. */
function typesOf(schema: unknown): Set<string> {
  if (!isRecord(schema)) return new Set();
  const type = schema.type;
  if (typeof type === 'string') return new Set([type]);
  if (Array.isArray(type)) return new Set(type.filter((t): t is string => typeof t === 'string'));
  // `anyOf: [{type: "number"}, {type: "null"}]`, as zod and pydantic write optional fields.
  const options = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : [];
  return new Set(options.flatMap((option) => [...typesOf(option)]));
}

function convert(key: string, raw: string, types: Set<string>): unknown {
  // A string wins whenever the schema allows one: `id=007` must stay "007".
  if (types.size === 0 || types.has('string')) return raw;
  if ((types.has('number') || types.has('integer')) && raw.trim() !== '' && Number.isFinite(Number(raw))) {
    const n = Number(raw);
    if (types.has('number') || Number.isInteger(n)) return n;
  }
  if (types.has('boolean') && (raw === 'true' || raw === 'false')) return raw === 'true';
  if (types.has('null') && raw === 'null') return null;
  if (types.has('object') || types.has('array')) return parseJsonValue(key, raw);
  throw new UsageError(`invalid value for "${key}": expected ${[...types].join(' or ')}, got "${raw}"`);
}

function parseJsonValue(key: string, raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new UsageError(`invalid value for "${key}": not valid JSON: ${raw}`);
  }
}
