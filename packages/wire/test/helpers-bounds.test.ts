/** Helpers that take any value or a bound, at their edges (helper-163 L10). */
import { describe, expect, it } from 'vitest';
import { clip, fieldOptions } from '../src/index.js';

describe('clip', () => {
  it('cuts to max code units then …, never inside a pair; refuses a max that is no length', () => {
    expect(clip('abcdef', 3)).toBe('abc…');
    expect(clip('ab\u{1f600}', 3)).toBe('ab…');
    expect(clip('abc', 3)).toBe('abc');
    expect(clip('abc', 0)).toBe('…');
    for (const max of [-1, 1.5, Number.NaN])
      expect(() => clip('abcdef', max), String(max)).toThrow(RangeError);
  });
});

describe('fieldOptions', () => {
  it('takes any value: no object is no options, an option that is no object no value', () => {
    for (const v of [null, undefined, 5, 'x', true]) expect(fieldOptions(v)).toEqual([]);
    expect(fieldOptions({ oneOf: [null, { const: 'a', title: 'A' }] })).toEqual([undefined, 'a']);
    expect(fieldOptions({ items: null })).toEqual([]);
    expect(fieldOptions({ enum: ['a', 'b'] })).toEqual(['a', 'b']);
  });
});
