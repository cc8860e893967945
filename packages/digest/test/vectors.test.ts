import canonicalizePackage from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { CanonicalizeError, canonicalize } from '../src/index.js';
import { JCS_VECTORS } from './fixtures/jcs-vectors.js';

/**
 * Every vector is checked against our canonicalizer and, as the evaluation
 * the project asked for, against the `canonicalize` npm package: both must be
 * exact. What the package does NOT do (refuse input JSON cannot carry) is
 * pinned at the end, because it is why `@mrtr/digest` keeps its own.
 */
describe('RFC 8785 vectors', () => {
  it.each(JCS_VECTORS)('$name: ours is exact', ({ input, output }) => {
    expect(canonicalize(JSON.parse(input))).toBe(output);
  });

  it.each(JCS_VECTORS)('$name: the canonicalize package is exact', ({ input, output }) => {
    expect(canonicalizePackage(JSON.parse(input))).toBe(output);
  });

  it.each(JCS_VECTORS)('$name: the output is its own canonical form', ({ output }) => {
    expect(canonicalize(JSON.parse(output))).toBe(output);
  });
});

describe('strings, every UTF-16 code unit alone', () => {
  const SHORT: Record<number, string> = { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r' };

  /** The §3.2.2.2 escaping, written out independently of JSON.stringify. */
  function expected(c: number): string {
    if (c < 0x20) return `"${SHORT[c] ?? `\\u${c.toString(16).padStart(4, '0')}`}"`;
    if (c === 0x22) return '"\\""';
    if (c === 0x5c) return '"\\\\"';
    return `"${String.fromCharCode(c)}"`;
  }

  it('escapes exactly as RFC 8785 says for all 63,488 non-surrogates; both implementations agree', () => {
    let checked = 0;
    for (let c = 0; c <= 0xffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const s = String.fromCharCode(c);
      const ours = canonicalize(s);
      if (ours !== expected(c) || canonicalizePackage(s) !== ours) {
        expect({ c, ours, pkg: canonicalizePackage(s) }).toEqual({
          c,
          ours: expected(c),
          pkg: expected(c),
        });
      }
      checked++;
    }
    expect(checked).toBe(0x10000 - 0x800);
  });

  it('refuses all 2,048 lone surrogates with a typed error (the package throws an untyped Error)', () => {
    for (let c = 0xd800; c <= 0xdfff; c++) {
      const s = `a${String.fromCharCode(c)}b`;
      let error: unknown;
      try {
        canonicalize({ k: s });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(CanonicalizeError);
      expect((error as CanonicalizeError).code).toBe('lone_surrogate');
      expect((error as CanonicalizeError).path).toBe('/k');
      expect(() => canonicalizePackage(s)).toThrow(Error);
    }
  });

  it('passes every high surrogate followed by a low one through raw', () => {
    for (let hi = 0xd800; hi <= 0xdbff; hi++) {
      for (const lo of [0xdc00, 0xde00, 0xdfff]) {
        const s = String.fromCharCode(hi, lo);
        expect(canonicalize(s)).toBe(`"${s}"`);
        expect(canonicalizePackage(s)).toBe(`"${s}"`);
      }
    }
  });
});

describe('where the canonicalize package silently changes input that @mrtr/digest refuses', () => {
  it.each<[string, unknown, string | undefined]>([
    ['an undefined member is dropped', { a: undefined, b: 1 }, '{"b":1}'],
    ['undefined in an array becomes null', [undefined], '[null]'],
    ['a function member is dropped', { f: () => 1 }, '{}'],
    [
      'toJSON is called (a Date becomes a string)',
      { d: new Date(0) },
      '{"d":"1970-01-01T00:00:00.000Z"}',
    ],
    ['a Map becomes {}', { m: new Map([['a', 1]]) }, '{"m":{}}'],
    ['a boxed string is unwrapped', { s: new String('x') }, '{"s":"x"}'],
    ['undefined at the top returns undefined', undefined, undefined],
  ])('%s', (_label, value, packageOutput) => {
    expect(canonicalizePackage(value)).toBe(packageOutput);
    expect(() => canonicalize(value)).toThrow(CanonicalizeError);
  });
});
