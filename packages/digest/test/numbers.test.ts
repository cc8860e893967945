import canonicalizePackage from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../src/index.js';

/** The IEEE 754 double with the given 64-bit pattern. */
function fromBits(bits: bigint): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt.asUintN(64, bits));
  return view.getFloat64(0);
}

function toBits(n: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, n);
  return view.getBigUint64(0);
}

/** The neighbouring double above (+1) or below (−1) a positive finite n. */
function step(n: number, by: 1n | -1n): number {
  return fromBits(toBits(n) + by);
}

/** mulberry32: a small seeded PRNG, so the corpus is the same on every run. */
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

/** A corpus of finite doubles: boundaries, every power of ten, their neighbours, random bit patterns. */
function corpus(): number[] {
  const rand = prng(0x5eed8785);
  const values: number[] = [
    0,
    -0,
    1,
    -1,
    0.1,
    0.2,
    0.1 + 0.2,
    1 / 3,
    2 / 3,
    Math.PI,
    Math.E,
    Number.EPSILON,
    Number.MIN_VALUE,
    Number.MAX_VALUE,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
    2 ** 53 + 2,
    2 ** 64,
    2 ** -1074,
    2 ** -1022, // smallest normal
    step(2 ** -1022, -1n), // largest subnormal
    1e21,
    step(1e21, -1n),
    1e-6,
    step(1e-6, -1n),
    1e-7,
    333333333.3333333,
    1424953923781206.2,
    Number('9007199254740993'), // reads as 9007199254740992
  ];
  // Every power of ten a double can approach, and its two neighbours.
  for (let k = -323; k <= 308; k++) {
    const p = Number(`1e${k}`);
    values.push(p);
    if (k % 3 === 0 && p > Number.MIN_VALUE) values.push(step(p, 1n), step(p, -1n));
  }
  // Integers near 2^53 and short decimals as people write them.
  for (let i = -8; i <= 8; i++) values.push(2 ** 53 + i, -(2 ** 53) + i);
  for (let i = 0; i < 150; i++) values.push(Number((rand() * 10 ** (rand() * 8)).toFixed(i % 7)));
  // Random bit patterns: any sign, any finite exponent, any mantissa.
  while (values.length < 1400) {
    const hi = BigInt(Math.floor(rand() * 2 ** 32));
    const lo = BigInt(Math.floor(rand() * 2 ** 32));
    const n = fromBits((hi << 32n) | lo);
    if (Number.isFinite(n)) values.push(n);
  }
  return values;
}

/** Significant decimal digits of a serialized finite number (sign, point, exponent, and edge zeros removed). */
function significantDigits(text: string): string {
  const mantissa = (text.split('e')[0] as string).replace('-', '').replace('.', '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '') || '0';
}

const CORPUS = corpus();

describe(`number serialization corpus (${CORPUS.length} doubles)`, () => {
  it('has at least 1,000 distinct values', () => {
    const distinct = new Set(CORPUS.map((n) => toBits(n)));
    expect(distinct.size).toBeGreaterThanOrEqual(1000);
  });

  it('equals JSON.stringify (ECMAScript Number::toString) for every value, as does the package', () => {
    const wrong = CORPUS.filter(
      (n) => canonicalize(n) !== JSON.stringify(n) || canonicalizePackage(n) !== JSON.stringify(n),
    );
    expect(wrong).toEqual([]);
  });

  it('round-trips: the text reads back as the same double (-0 as 0)', () => {
    for (const n of CORPUS) {
      const back = Number(canonicalize(n));
      expect(back === n || (n === 0 && back === 0)).toBe(true);
    }
  });

  it('uses exponent form exactly when |n| ≥ 1e21 or 0 < |n| < 1e-6, in the ECMAScript spelling', () => {
    for (const n of CORPUS) {
      const text = canonicalize(n);
      const a = Math.abs(n);
      if (a >= 1e21 || (a > 0 && a < 1e-6)) {
        expect(text, String(n)).toMatch(/^-?[1-9](\.\d*[1-9])?e[+-][1-9]\d*$/);
      } else {
        expect(text, String(n)).toMatch(/^-?(0|[1-9]\d*)(\.\d*[1-9])?$/);
      }
    }
  });

  it('uses the fewest significant digits that read back as the same double', () => {
    for (const n of CORPUS) {
      if (n === 0) continue;
      const digits = significantDigits(canonicalize(n)).length;
      for (let fewer = 1; fewer < digits; fewer++) {
        expect(Number(Math.abs(n).toPrecision(fewer)), `${n} at ${fewer} digits`).not.toBe(
          Math.abs(n),
        );
      }
    }
  });

  it('serializes -0 as 0 inside structures too', () => {
    expect(canonicalize({ z: -0, a: [-0, 0] })).toBe('{"a":[0,0],"z":0}');
  });
});
