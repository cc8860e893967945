import canonicalizePackage from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize, digestEquals, digestJson } from '../src/index.js';
import { type Json, shuffled } from './fixtures/shuffle.js';

/** JSON values with any code point (never a lone surrogate) in keys and strings. */
const json = fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }) as fc.Arbitrary<Json>;
/** JSON's four whitespace characters, any number of them. */
const whitespace = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 3 });

/** A seeded PRNG (mulberry32) driven by a fast-check integer, so failures shrink and replay. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** JSON text of the value with whitespace from `ws` around every token. */
function spaced(value: Json, ws: () => string): string {
  if (Array.isArray(value))
    return `[${ws()}${value.map((v) => spaced(v, ws)).join(`${ws()},${ws()}`)}${ws()}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value).map(
      (k) => `${ws()}${JSON.stringify(k)}${ws()}:${ws()}${spaced(value[k] as Json, ws)}${ws()}`,
    );
    return `{${ws()}${members.join(',')}${ws()}}`;
  }
  return `${ws()}${JSON.stringify(value)}${ws()}`;
}

/** Change exactly one thing of the data: a scalar, a member name, or an array's length. */
function mutated(value: Json, rand: () => number): Json {
  if (Array.isArray(value)) {
    if (value.length === 0 || rand() < 0.1) return [...value, null];
    const i = Math.floor(rand() * value.length);
    return value.map((v, k) => (k === i ? mutated(v, rand) : v));
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return { added: null };
    const key = keys[Math.floor(rand() * keys.length)] as string;
    if (rand() < 0.15) {
      let renamed = `${key}x`;
      while (renamed in value) renamed += 'x';
      const { [key]: moved, ...rest } = value;
      return { ...rest, [renamed]: moved as Json };
    }
    return { ...value, [key]: mutated(value[key] as Json, rand) };
  }
  if (value === null) return false;
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'number') return value + 1 !== value ? value + 1 : -value;
  return `${value}x`;
}

const runs = { numRuns: 1000 };

describe('digest properties (fast-check, 1,000 values each)', () => {
  it('orders members by UTF-16 code units, for small and large objects alike', () => {
    const unit = fc.constantFrom(
      'a',
      'b',
      '€',
      '\r',
      '\ufb33',
      '\u{1f600}',
      '\u0080',
      'ö',
      '1',
      '10',
      '2',
    );
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit, maxLength: 4 }), fc.integer(), { maxKeys: 40 }),
        (record) => {
          const expected = `{${Object.keys(record)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${record[k]}`)
            .join(',')}}`;
          expect(canonicalize(record)).toBe(expected);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('member order never changes the canonical form or the digest', () => {
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        const other = shuffled(value, prng(seed));
        expect(canonicalize(other)).toBe(canonicalize(value));
        expect(digestJson(other)).toBe(digestJson(value));
      }),
      runs,
    );
  });

  it('whitespace in the JSON text never changes the digest', () => {
    fc.assert(
      fc.property(json, fc.infiniteStream(whitespace), (value, stream) => {
        const it = stream[Symbol.iterator]();
        const text = spaced(value, () => it.next().value as string);
        expect(digestJson(JSON.parse(text))).toBe(digestJson(value));
      }),
      runs,
    );
  });

  it('any change of the data changes the digest', () => {
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        const changed = mutated(value, prng(seed));
        expect(canonicalize(changed)).not.toBe(canonicalize(value));
        expect(digestEquals(digestJson(changed), digestJson(value))).toBe(false);
      }),
      runs,
    );
  });

  it('the canonical text parses back to the same data and is a fixed point', () => {
    fc.assert(
      fc.property(json, (value) => {
        const text = canonicalize(value);
        expect(canonicalize(JSON.parse(text))).toBe(text);
      }),
      runs,
    );
  });

  it('agrees with the canonicalize package on every generated value', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalize(value)).toBe(canonicalizePackage(value));
      }),
      runs,
    );
  });
});
