import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CanonicalizeError,
  canonicalize,
  DIGEST_DOMAIN,
  digestCanonical,
  digestEquals,
  digestJson,
} from '../src/index.js';
import { type Json, shuffled } from './fixtures/shuffle.js';

const FORMAT = /^sha256:[A-Za-z0-9_-]{43}$/;

/** mulberry32: a small seeded PRNG, so every run checks the same values. */
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

const ALPHABET = [
  'a',
  'b',
  'Z',
  '0',
  ' ',
  '"',
  '\\',
  '\n',
  '\u0001',
  'é',
  '€',
  '\u2028',
  '😀',
  '\ufb33',
  '~',
  '/',
];

function randomString(rand: () => number, max = 6): string {
  let s = '';
  const n = Math.floor(rand() * (max + 1));
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return s;
}

function randomNumber(rand: () => number): number {
  switch (Math.floor(rand() * 5)) {
    case 0:
      return Math.floor(rand() * 2000) - 1000;
    case 1:
      return (rand() - 0.5) * 10 ** Math.floor(rand() * 40 - 20);
    case 2:
      return rand() * 1e300;
    case 3:
      return Number.MAX_SAFE_INTEGER - Math.floor(rand() * 10);
    default:
      return rand();
  }
}

function randomJson(rand: () => number, depth: number): Json {
  const kind = Math.floor(rand() * (depth > 0 ? 7 : 5));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
      return randomNumber(rand);
    case 3:
    case 4:
      return randomString(rand);
    case 5: {
      const out: Json[] = [];
      const n = Math.floor(rand() * 4);
      for (let i = 0; i < n; i++) out.push(randomJson(rand, depth - 1));
      return out;
    }
    default: {
      const out: Record<string, Json> = {};
      const n = Math.floor(rand() * 5);
      for (let i = 0; i < n; i++) out[randomString(rand, 3)] = randomJson(rand, depth - 1);
      return out;
    }
  }
}

/** Change exactly one scalar of the value (or an object key, or an array's length). */
function mutated(value: Json, rand: () => number): Json {
  if (Array.isArray(value)) {
    if (value.length === 0 || rand() < 0.1) return [...value, 0];
    const i = Math.floor(rand() * value.length);
    return value.map((v, k) => (k === i ? mutated(v, rand) : v));
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return { added: null };
    const key = keys[Math.floor(rand() * keys.length)] as string;
    if (rand() < 0.1) {
      const { [key]: moved, ...rest } = value;
      return { ...rest, [`${key}\u0000renamed`]: moved as Json };
    }
    return { ...value, [key]: mutated(value[key] as Json, rand) };
  }
  if (value === null) return false;
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'number') return value + 1 === value ? value * 2 : value + 1;
  return `${value}x`;
}

/** Independent check of RFC 8785 key order: UTF-16 code unit comparison, written out by hand. */
function codeUnitLess(a: string, b: string): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d < 0;
  }
  return a.length < b.length;
}

/** A reference serializer written independently of the package: keys sorted with {@link codeUnitLess}. */
function reference(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort((a, b) =>
      codeUnitLess(a, b) ? -1 : codeUnitLess(b, a) ? 1 : 0,
    );
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(value[k] as Json)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

describe('digestJson', () => {
  it('has the form sha256:<43 base64url characters>', () => {
    for (const v of [null, 0, '', [], {}, { a: [1, 'two', { three: true }] }]) {
      const d = digestJson(v);
      expect(d).toMatch(FORMAT);
      expect(d).toHaveLength(50);
    }
  });

  it('is SHA-256 over the domain prefix and the UTF-8 canonical text', () => {
    const value = { title: 'Roadmap €', workspaceUri: 'notes://team', n: [1e21, -0] };
    const expected = createHash('sha256')
      .update(Buffer.from(DIGEST_DOMAIN, 'utf8'))
      .update(Buffer.from(canonicalize(value), 'utf8'))
      .digest('base64url');
    expect(digestJson(value)).toBe(`sha256:${expected}`);
    // Domain separated: not the bare SHA-256 of the canonical text.
    const bare = createHash('sha256').update(canonicalize(value), 'utf8').digest('base64url');
    expect(digestJson(value)).not.toBe(`sha256:${bare}`);
  });

  it('keeps the digest its README documents (a change would orphan every ticket in flight)', () => {
    expect(digestJson({ serviceId: 'svc_8f21c', name: 'api-prod' })).toBe(
      'sha256:K8cwMDm1aquZJcBDcBuCGvOJ4GLdCP02GBFwC7WAf7g',
    );
  });

  it('equals digestCanonical of the canonical text', () => {
    const value = { workspaceUri: 'notes://team', title: 'Roadmap €', n: [1e21, -0] };
    expect(digestCanonical(canonicalize(value))).toBe(digestJson(value));
    expect(digestCanonical(canonicalize({ ...value, title: 'Roadmap' }))).not.toBe(
      digestJson(value),
    );
  });

  it('does not depend on key order', () => {
    expect(digestJson({ title: 'Roadmap', workspaceUri: 'notes://team' })).toBe(
      digestJson({ workspaceUri: 'notes://team', title: 'Roadmap' }),
    );
  });

  it('does not depend on whitespace or number spelling of the JSON text', () => {
    const compact = '{"b":[1,2,{"c":"d"}],"a":1.50,"e":1E2}';
    const pretty = '{\n  "a" : 1.5 ,\n\t"b": [ 1, 2, { "c" : "d" } ],\r\n  "e": 100\n}\n';
    expect(digestJson(JSON.parse(pretty))).toBe(digestJson(JSON.parse(compact)));
  });

  it('changes when any value changes', () => {
    const base = { title: 'Roadmap', n: 1, flag: true, list: ['a', 'b'], nested: { x: null } };
    const d = digestJson(base);
    const variants: unknown[] = [
      { ...base, title: 'roadmap' },
      { ...base, title: 'Roadmap ' },
      { ...base, n: 2 },
      { ...base, n: '1' },
      { ...base, flag: false },
      { ...base, list: ['b', 'a'] },
      { ...base, list: ['a', 'b', 'c'] },
      { ...base, nested: { x: 0 } },
      { ...base, nested: {} },
      { ...base, extra: null },
      { title: 'Roadmap', n: 1, flag: true, list: ['a', 'b'] },
    ];
    const digests = new Set(variants.map((v) => digestJson(v)));
    expect(digests.size).toBe(variants.length);
    expect(digests.has(d)).toBe(false);
  });

  it('throws CanonicalizeError for values JSON cannot carry', () => {
    expect(() => digestJson({ a: undefined })).toThrow(CanonicalizeError);
    expect(() => digestJson({ a: 1n })).toThrow(CanonicalizeError);
  });
});

describe('digestEquals', () => {
  const a = digestJson({ a: 1 });
  const b = digestJson({ a: 2 });

  it('is true for equal digests and false for different ones', () => {
    expect(digestEquals(a, `${a}`)).toBe(true);
    expect(digestEquals(a, b)).toBe(false);
    expect(digestEquals(b, a)).toBe(false);
  });

  it('is false when only the last character differs', () => {
    const last = a.at(-1) === 'A' ? 'B' : 'A';
    expect(digestEquals(a, `${a.slice(0, -1)}${last}`)).toBe(false);
  });

  it('is false for a prefix, a longer string, or a non-string', () => {
    expect(digestEquals(a, a.slice(0, -1))).toBe(false);
    expect(digestEquals(a, `${a}A`)).toBe(false);
    expect(digestEquals(a, '')).toBe(false);
    expect(digestEquals(a, undefined as unknown as string)).toBe(false);
    expect(digestEquals(null as unknown as string, a)).toBe(false);
    expect(digestEquals(['x'] as unknown as string, ['x'] as unknown as string)).toBe(false);
  });
});

describe('seeded random JSON values (500 cases)', () => {
  it('canonical form is sorted, round-trips, ignores key order and whitespace, and detects changes', () => {
    const rand = prng(0x8785);
    for (let i = 0; i < 500; i++) {
      const value = randomJson(rand, 4);
      const text = canonicalize(value);

      // Canonical text equals the reference, is JSON of the same data, and is a fixed point.
      const reparsed = JSON.parse(text) as Json;
      expect(reparsed).toEqual(value);
      expect(canonicalize(reparsed)).toBe(text);
      expect(text).toBe(reference(value));

      // Key insertion order and JSON whitespace never matter.
      const other = shuffled(value, rand);
      expect(canonicalize(other)).toBe(text);
      expect(digestJson(other)).toBe(digestJson(value));
      expect(digestJson(JSON.parse(JSON.stringify(other, null, 2)))).toBe(digestJson(value));

      // Any change of the data changes the digest.
      const changed = mutated(value, rand);
      expect(canonicalize(changed)).not.toBe(text);
      expect(digestEquals(digestJson(changed), digestJson(value))).toBe(false);
    }
  });
});
