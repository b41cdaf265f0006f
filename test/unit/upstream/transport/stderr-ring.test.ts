import { describe, expect, it } from 'vitest';
import { StderrRing } from '../../../../src/upstream/transport/stderr-ring.js';

describe('StderrRing', () => {
  it('splits chunks into lines, joining lines split across chunks', () => {
    const ring = new StderrRing();
    ring.push('first li');
    ring.push(Buffer.from('ne\r\nsecond\nthi'));
    expect(ring.lines()).toEqual(['first line', 'second', 'thi']);
    ring.push('rd\n');
    expect(ring.lines()).toEqual(['first line', 'second', 'third']);
  });

  it('keeps only the last `capacity` complete lines', () => {
    const ring = new StderrRing(3);
    for (let i = 1; i <= 10; i++) ring.push(`line ${i}\n`);
    expect(ring.lines()).toEqual(['line 8', 'line 9', 'line 10']);
  });

  it('keeps a multi-byte character split across chunks intact', () => {
    const ring = new StderrRing();
    const bytes = Buffer.from('naïve → ok\n');
    ring.push(bytes.subarray(0, 3)); // cuts "ï" in half
    ring.push(bytes.subarray(3));
    expect(ring.lines()).toEqual(['naïve → ok']);
  });

  it('tail(n) joins the last n lines, and is empty when nothing was written', () => {
    const ring = new StderrRing();
    expect(ring.tail()).toBe('');
    ring.push('a\nb\nc\n');
    expect(ring.tail(2)).toBe('b\nc');
    expect(ring.tail(0)).toBe('');
  });

  it('masks every line before keeping or passing it on, a line still being written included', () => {
    const ring = new StderrRing(10, (line) => line.replaceAll('s3cr3t', '****'));
    const seen: string[][] = [];
    ring.onLines((lines) => seen.push(lines));
    ring.push('token s3c');
    ring.push('r3t refused\nstill s3cr3t');
    ring.pushLog('[log error] s3cr3t leaked');
    expect(ring.lines()).toEqual(['token **** refused', '[log error] **** leaked', 'still ****']);
    expect(seen).toEqual([['token **** refused'], ['[log error] **** leaked']]);
  });

  it('cuts very long lines', () => {
    const ring = new StderrRing();
    ring.push(`${'x'.repeat(100_000)}\n`);
    expect(ring.lines()[0]!.length).toBeLessThan(5_000);
  });
});
