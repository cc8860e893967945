import { describe, expect, it } from 'vitest';
import {
  CANONICALIZE_MAX_DEPTH,
  CanonicalizeError,
  type CanonicalizeErrorCode,
  canonicalize,
} from '../src/index.js';

/** The IEEE 754 double whose bit pattern is the given 16 hex digits (RFC 8785 Appendix B style). */
function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

/** Run canonicalize and return the CanonicalizeError it throws (fails the test if it does not). */
function rejection(value: unknown): CanonicalizeError {
  try {
    canonicalize(value);
  } catch (error) {
    expect(error).toBeInstanceOf(CanonicalizeError);
    expect(error).toBeInstanceOf(Error);
    return error as CanonicalizeError;
  }
  throw new Error('canonicalize did not throw');
}

function expectRejected(value: unknown, code: CanonicalizeErrorCode, path: string): void {
  const error = rejection(value);
  expect(error.name).toBe('CanonicalizeError');
  expect({ code: error.code, path: error.path }).toEqual({ code, path });
}

describe('RFC 8785 examples', () => {
  it('canonicalizes the §3.2.2 structure sample (numbers, string escapes, literals)', () => {
    const input = String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`;
    const expected = String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`;
    expect(canonicalize(JSON.parse(input))).toBe(expected);
  });

  it('sorts the §3.2.3 keys by UTF-16 code units', () => {
    const input = String.raw`{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`;
    const out = canonicalize(JSON.parse(input));
    const values = [...out.matchAll(/:"([^"]*)"/g)].map((m) => m[1]);
    expect(values).toEqual([
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ]);
    expect(out).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('sorts by code units, not code points: a supplementary-plane key sorts before U+FB33', () => {
    // Code point order would put U+1F600 after U+FB33; UTF-16 code units (0xD83D) put it before.
    expect(canonicalize({ '\ufb33': 1, '\u{1f600}': 2 })).toBe('{"\u{1f600}":2,"\ufb33":1}');
  });

  it('sorts nested objects and keeps array order', () => {
    expect(canonicalize({ b: [3, 1, 2], a: { z: null, y: { d: 1, c: 2 } } })).toBe(
      '{"a":{"y":{"c":2,"d":1},"z":null},"b":[3,1,2]}',
    );
  });
});

describe('number serialization (RFC 8785 §3.2.2.3, Appendix B)', () => {
  it.each([
    [1e21, '1e+21'],
    [1e-7, '1e-7'],
    [-0, '0'],
    [0, '0'],
    [0.000001, '0.000001'],
    [333333333.3333333, '333333333.3333333'],
    [5e-324, '5e-324'],
    [-5e-324, '-5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [-1.7976931348623157e308, '-1.7976931348623157e+308'],
    [1e20, '100000000000000000000'],
    [123456789012345680000, '123456789012345680000'],
    [4.5, '4.5'],
    [-1.5, '-1.5'],
    [2e-3, '0.002'],
  ])('%s serializes as %s', (n, text) => {
    expect(canonicalize(n)).toBe(text);
    expect(canonicalize([n])).toBe(`[${text}]`);
  });

  it('9007199254740993 in JSON text is read as the double 9007199254740992', () => {
    expect(canonicalize(JSON.parse('9007199254740993'))).toBe('9007199254740992');
    expect(canonicalize(JSON.parse('{"n":-9007199254740993}'))).toBe('{"n":-9007199254740992}');
  });

  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('Appendix B: bits %s serialize as %s', (bits, text) => {
    expect(canonicalize(fromBits(bits))).toBe(text);
  });

  it.each([
    ['7fffffffffffffff', NaN],
    ['7ff0000000000000', Infinity],
  ])('Appendix B: bits %s (%s) are rejected', (bits) => {
    expectRejected(fromBits(bits), 'non_finite_number', '');
  });
});

describe('string escaping (RFC 8785 §3.2.2.2)', () => {
  it('escapes every control character U+0000..U+001F, with the short forms where JSON has them', () => {
    const short: Record<number, string> = {
      8: '\\b',
      9: '\\t',
      10: '\\n',
      12: '\\f',
      13: '\\r',
    };
    for (let c = 0; c < 0x20; c++) {
      const expected = short[c] ?? `\\u${c.toString(16).padStart(4, '0')}`;
      expect(canonicalize(String.fromCharCode(c))).toBe(`"${expected}"`);
    }
  });

  it('uses lowercase hex in \\u escapes', () => {
    expect(canonicalize('\u001f\u000b')).toBe('"\\u001f\\u000b"');
  });

  it('escapes the quotation mark and the reverse solidus, and nothing else in ASCII', () => {
    expect(canonicalize('"')).toBe('"\\""');
    expect(canonicalize('\\')).toBe('"\\\\"');
    let printable = '';
    for (let c = 0x20; c < 0x7f; c++)
      if (c !== 0x22 && c !== 0x5c) printable += String.fromCharCode(c);
    expect(canonicalize(printable)).toBe(`"${printable}"`);
    expect(canonicalize('/')).toBe('"/"');
    expect(canonicalize('\u007f')).toBe('"\u007f"');
  });

  it('leaves U+2028, U+2029 and other non-ASCII characters raw', () => {
    expect(canonicalize('\u2028\u2029')).toBe('"\u2028\u2029"');
    expect(canonicalize('é€😀\u0080\ufeff')).toBe('"é€😀\u0080\ufeff"');
    expect(canonicalize('\ud83d\ude00')).toHaveLength(4);
  });

  it('escapes the same way in object keys', () => {
    expect(canonicalize({ 'a"b\n': '\u2028' })).toBe('{"a\\"b\\n":"\u2028"}');
  });
});

describe('rejected input', () => {
  it.each<[string, unknown, CanonicalizeErrorCode, string]>([
    ['undefined at the top', undefined, 'undefined', ''],
    ['undefined member', { a: { b: undefined } }, 'undefined', '/a/b'],
    ['undefined in an array', [1, undefined], 'undefined', '/1'],
    // biome-ignore lint/suspicious/noSparseArray: a hole reads as undefined
    ['a hole in a sparse array', [1, , 3], 'undefined', '/1'],
    ['function', { f: () => 1 }, 'function', '/f'],
    [
      'toJSON hook is not honoured (it is a function member)',
      { toJSON: () => 'x' },
      'function',
      '/toJSON',
    ],
    ['symbol', [Symbol('s')], 'symbol', '/0'],
    ['BigInt', { n: 10n }, 'bigint', '/n'],
    ['NaN', { x: [Number.NaN] }, 'non_finite_number', '/x/0'],
    ['Infinity', { x: Number.POSITIVE_INFINITY }, 'non_finite_number', '/x'],
    ['-Infinity', Number.NEGATIVE_INFINITY, 'non_finite_number', ''],
    ['a lone high surrogate in a value', { s: 'ab\ud800' }, 'lone_surrogate', '/s'],
    ['a lone low surrogate in a value', ['\udc00x'], 'lone_surrogate', '/0'],
    ['a reversed surrogate pair', ['\ude00\ud83d'], 'lone_surrogate', '/0'],
    ['a lone high surrogate in a key', { ok: { '\ud83d': 1 } }, 'lone_surrogate', '/ok/\ud83d'],
    ['a lone low surrogate in a key', { '\ude00k': true }, 'lone_surrogate', '/\ude00k'],
    ['a Date', { when: new Date(0) }, 'unsupported_object', '/when'],
    ['a Map', [new Map([['a', 1]])], 'unsupported_object', '/0'],
    ['a Set', new Set([1]), 'unsupported_object', ''],
    [
      'a class instance',
      {
        c: new (class Point {
          x = 1;
        })(),
      },
      'unsupported_object',
      '/c',
    ],
    ['a boxed string', { s: new String('x') }, 'unsupported_object', '/s'],
    ['a typed array', { b: new Uint8Array(2) }, 'unsupported_object', '/b'],
    ['a RegExp', /x/, 'unsupported_object', ''],
  ])('%s', (_label, value, code, path) => {
    expectRejected(value, code, path);
  });

  it('escapes "/" and "~" in the error path as JSON Pointer does', () => {
    expectRejected({ 'a/b': { 'c~d': undefined } }, 'undefined', '/a~1b/c~0d');
  });

  it('rejects an object cycle with the path where the cycle closes', () => {
    const a: Record<string, unknown> = { x: 1 };
    a.inner = { back: a };
    expectRejected(a, 'cycle', '/inner/back');
  });

  it('rejects an array that contains itself', () => {
    const arr: unknown[] = [1];
    arr.push(arr);
    expectRejected({ arr }, 'cycle', '/arr/1');
  });

  it('rejects a cycle that closes deep inside the value, at the path where it closes', () => {
    const root: Record<string, unknown> = {};
    let node = root;
    for (let i = 0; i < 300; i++) {
      const next: Record<string, unknown> = {};
      node.c = next;
      node = next;
    }
    node.back = root.c;
    expectRejected(root, 'cycle', `${'/c'.repeat(300)}/back`);
  });

  it(`accepts ${CANONICALIZE_MAX_DEPTH} nested containers and refuses one more with too_deep`, () => {
    const nest = (depth: number): unknown => {
      let v: unknown = 0;
      for (let i = 0; i < depth; i++) v = i % 2 ? { k: v } : [v];
      return v;
    };
    const text = canonicalize(nest(CANONICALIZE_MAX_DEPTH));
    expect(text.startsWith('{"k":[{"k":')).toBe(true);
    const error = rejection(nest(CANONICALIZE_MAX_DEPTH + 1));
    expect(error.code).toBe('too_deep');
    expect(error.path.split('/').length - 1).toBe(CANONICALIZE_MAX_DEPTH);
  });

  it('refuses 100,000 levels of nesting with too_deep, never a RangeError', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(rejection(deep).code).toBe('too_deep');
  });

  it('has a message that names the path and the reason, and a / path for the root', () => {
    expect(rejection({ a: Number.NaN }).message).toContain('/a');
    expect(rejection({ a: Number.NaN }).message).toContain('non finite number');
    expect(rejection(undefined).message).toContain('at /');
  });
});

describe('accepted input', () => {
  it('allows the same object twice when it is not a cycle', () => {
    const shared = { a: 1, b: [true] };
    expect(canonicalize([shared, shared])).toBe('[{"a":1,"b":[true]},{"a":1,"b":[true]}]');
    expect(canonicalize({ x: shared, y: { z: shared } })).toBe(
      '{"x":{"a":1,"b":[true]},"y":{"z":{"a":1,"b":[true]}}}',
    );
    const arr = [1];
    expect(canonicalize([arr, [arr, arr]])).toBe('[[1],[[1],[1]]]');
  });

  it('accepts objects with a null prototype', () => {
    const o = Object.create(null) as Record<string, unknown>;
    o.b = 1;
    o.a = 2;
    expect(canonicalize(o)).toBe('{"a":2,"b":1}');
  });

  it('serializes literals, empty containers and an own __proto__ key', () => {
    expect(canonicalize(null)).toBe('null');
    expect(canonicalize(true)).toBe('true');
    expect(canonicalize(false)).toBe('false');
    expect(canonicalize({})).toBe('{}');
    expect(canonicalize([])).toBe('[]');
    expect(canonicalize('')).toBe('""');
    expect(canonicalize(JSON.parse('{"__proto__":{"b":1},"a":[]}'))).toBe(
      '{"__proto__":{"b":1},"a":[]}',
    );
  });

  it('ignores symbol-keyed properties as JSON does', () => {
    expect(canonicalize({ a: 1, [Symbol('hidden')]: 2 })).toBe('{"a":1}');
  });
});

describe('string quoting', () => {
  it('quotes every UTF-16 code unit as JSON.stringify does, and refuses a lone surrogate', () => {
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      // Short strings are scanned by hand, longer ones go to JSON.stringify: both paths, both ends.
      for (const s of [ch, `id-${ch}`, `${ch}${'x'.repeat(63)}`, `${'x'.repeat(64)}${ch}`]) {
        if (s.isWellFormed()) expect(canonicalize(s)).toBe(JSON.stringify(s));
        else expect(rejection(s).code).toBe('lone_surrogate');
      }
    }
    expect(canonicalize('\ud83d\ude00')).toBe('"\ud83d\ude00"');
  });
});
