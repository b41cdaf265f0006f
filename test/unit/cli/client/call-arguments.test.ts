import { describe, expect, it } from 'vitest';
import { isKeyValueForm, parseKeyValueArguments, parseToolArguments } from '../../../../src/cli/client/call-arguments.js';
import { UsageError } from '../../../../src/cli/client/command.js';

const SCHEMA = {
  type: 'object',
  properties: {
    text: { type: 'string' },
    count: { type: 'integer' },
    ratio: { type: 'number' },
    verbose: { type: 'boolean' },
    filter: { type: 'object' },
    tags: { type: 'array', items: { type: 'string' } },
    limit: { anyOf: [{ type: 'number' }, { type: 'null' }] },
    id: { type: ['string', 'number'] },
  },
};

describe('call arguments', () => {
  it('tells key=value pairs from one JSON object', () => {
    expect(isKeyValueForm(['text=hi', 'count=2'])).toBe(true);
    expect(isKeyValueForm(['{"text":"a=b"}'])).toBe(false);
    expect(isKeyValueForm(['text=hi', 'oops'])).toBe(false);
    expect(isKeyValueForm([])).toBe(false);
    expect(parseToolArguments('{"text":"a=b"}')).toEqual({ text: 'a=b' });
    expect(() => parseToolArguments('hello')).toThrow(/or give them as key=value pairs/);
  });

  it('types each value by the input schema', () => {
    expect(
      parseKeyValueArguments(['text=42', 'count=3', 'ratio=0.5', 'verbose=true', 'filter={"a":1}', 'tags=["x","y"]', 'limit=null', 'id=007', 'other=1', 'eq=a=b'], SCHEMA),
    ).toEqual({ text: '42', count: 3, ratio: 0.5, verbose: true, filter: { a: 1 }, tags: ['x', 'y'], limit: null, id: '007', other: '1', eq: 'a=b' });
  });

  it('takes key:=json as JSON whatever the schema says', () => {
    expect(parseKeyValueArguments(['text:="quoted"', 'n:=5', 'list:=[1]'], SCHEMA)).toEqual({ text: 'quoted', n: 5, list: [1] });
    expect(parseKeyValueArguments(['anything=x'], undefined)).toEqual({ anything: 'x' });
  });

  it('refuses a value of the wrong type, bad JSON, a repeated key', () => {
    expect(() => parseKeyValueArguments(['count=2.5'], SCHEMA)).toThrow(/invalid value for "count": expected integer, got "2.5"/);
    expect(() => parseKeyValueArguments(['verbose=yes'], SCHEMA)).toThrow(UsageError);
    expect(() => parseKeyValueArguments(['filter={a:1}'], SCHEMA)).toThrow(/invalid value for "filter": not valid JSON/);
    expect(() => parseKeyValueArguments(['text=a', 'text=b'], SCHEMA)).toThrow(/given twice/);
    expect(() => parseKeyValueArguments([':=1'], SCHEMA)).toThrow(/expected key=value/);
  });
});
