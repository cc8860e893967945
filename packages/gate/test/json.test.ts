import { describe, expect, it } from 'vitest';
import { toJson } from '../src/json.js';

const roundTrip = (value: unknown) => JSON.parse(JSON.stringify(value));

describe('toJson: the JSON round trip of a recorded outcome', () => {
  const nullProto = Object.assign(Object.create(null), { a: 1 });
  const withProtoKey = JSON.parse('{"__proto__":{"x":1},"b":2}');
  const withGetter = Object.defineProperty({ a: 1 }, 'g', { get: () => 'read', enumerable: true });
  const hidden = Object.defineProperty({ a: 1 }, 'h', { value: 2, enumerable: false });
  const sparse = [1, 2, 3];
  delete sparse[1]; // a hole, as `[1, , 3]` makes it
  const values: unknown[] = [
    { content: [{ type: 'text', text: 'Deleted.' }], isError: false },
    { content: [], structuredContent: { n: 1.5, big: 1e21, neg: -3, list: [true, null, 'x'] } },
    'text \ud800 with a lone surrogate',
    -0,
    { zero: -0, list: [-0] },
    { nan: Number.NaN, inf: [Number.POSITIVE_INFINITY] },
    { gone: undefined, fn: () => 1, sym: Symbol('s'), kept: 1 },
    [undefined, () => 1, Symbol('s')],
    sparse,
    { when: new Date(0) },
    { toJSON: () => ({ replaced: true }) },
    { boxed: [new String('s'), new Number(1), new Boolean(false)] },
    { map: new Map([[1, 2]]), set: new Set([1]) },
    nullProto,
    withProtoKey,
    withGetter,
    hidden,
    { [Symbol('k')]: 1, '2': 'b', '1': 'a', z: 0 },
    { deep: JSON.parse(`${'['.repeat(40)}1${']'.repeat(40)}`) },
    null,
    true,
  ];
  it('equals JSON.parse(JSON.stringify(value)) for plain and other data alike', () => {
    for (const value of values) {
      const copy = toJson(value);
      expect(copy).toStrictEqual(roundTrip(value));
      if (value !== null && typeof value === 'object') expect(copy).not.toBe(value);
    }
    expect(Object.getPrototypeOf(toJson(withProtoKey))).toBe(Object.prototype);
    expect(Object.is(toJson(-0), 0)).toBe(true);
  });

  it('throws what the round trip throws (a BigInt, a cycle)', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    for (const value of [{ n: 1n }, cycle]) {
      expect(() => toJson(value)).toThrow(TypeError);
      expect(() => roundTrip(value)).toThrow(TypeError);
    }
  });
});
