/**
 * The header encoding client and server share: the Base64 sentinel
 * (`basic/transports/streamable-http`, "Value Encoding") and the
 * `x-mcp-header` annotations ("Schema Extension").
 */
import { describe, expect, it } from 'vitest';
import {
  bodyEncodingProblem,
  decodeHeaderValue,
  encodeHeaderValue,
  hasStrayJoiner,
  MAX_SCHEMA_DEPTH,
  readHeaderAnnotations,
  STRAY_JOINER,
  shownText,
} from '../src/index.js';

describe('encodeHeaderValue (streamable-http, "Value Encoding")', () => {
  it.each([
    ['us-west1', 'us-west1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
  ])('%j → %s', (value, encoded) => {
    expect(encodeHeaderValue(value)).toBe(encoded);
  });
});

const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('x-mcp-header annotations', () => {
  it('reads annotations reached through properties only', () => {
    const r = readHeaderAnnotations(
      schema({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        opts: {
          type: 'object',
          properties: { dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' } },
        },
      }),
    );
    expect(r).toEqual({
      ok: true,
      annotations: [
        { name: 'Region', path: ['region'], type: 'string' },
        { name: 'Dry-Run', path: ['opts', 'dry'], type: 'boolean' },
      ],
    });
  });

  it.each([
    ['an empty name', schema({ a: { type: 'string', 'x-mcp-header': '' } }), /not an HTTP token/],
    [
      'a name with a space',
      schema({ a: { type: 'string', 'x-mcp-header': 'A B' } }),
      /not an HTTP token/,
    ],
    [
      'a number property',
      schema({ a: { type: 'number', 'x-mcp-header': 'A' } }),
      /not string, integer or boolean/,
    ],
    [
      'a duplicate, case-insensitively',
      schema({
        a: { type: 'string', 'x-mcp-header': 'A' },
        b: { type: 'string', 'x-mcp-header': 'a' },
      }),
      /used twice/,
    ],
    [
      'a property under items',
      schema({
        a: {
          type: 'array',
          items: { type: 'object', properties: { b: { type: 'string', 'x-mcp-header': 'B' } } },
        },
      }),
      /not on a property reached through properties/,
    ],
    [
      'a property under oneOf',
      schema({ a: { oneOf: [{ type: 'string', 'x-mcp-header': 'A' }] } }),
      /not on a property reached through properties/,
    ],
    [
      'the schema root itself',
      { type: 'object', 'x-mcp-header': 'Root', properties: {} },
      /not on a property reached through properties/,
    ],
  ])('rejects %s', (_label, inputSchema, reason) => {
    const r = readHeaderAnnotations(inputSchema);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
  });

  it('refuses a schema nested 20,000 deep (or past MAX_SCHEMA_DEPTH) without throwing, and walks one at the bound', () => {
    const nested = (depth: number, inner: unknown): unknown =>
      JSON.parse(`${'['.repeat(depth)}${JSON.stringify(inner)}${']'.repeat(depth)}`);
    for (const deep of [
      nested(20_000, {}),
      { type: 'object', properties: { a: { x: nested(MAX_SCHEMA_DEPTH, {}) } } },
    ]) {
      const r = readHeaderAnnotations(deep);
      expect(r).toEqual({
        ok: false,
        reason: `the inputSchema nests deeper than ${MAX_SCHEMA_DEPTH} levels`,
      });
    }
    // An annotation found after a deep sibling is still read, in schema order.
    const r = readHeaderAnnotations({
      type: 'object',
      properties: {
        a: { type: 'string', 'x-mcp-header': 'A', x: nested(MAX_SCHEMA_DEPTH - 4, {}) },
        b: { type: 'string', 'x-mcp-header': 'B' },
      },
    });
    expect(r).toEqual({
      ok: true,
      annotations: [
        { name: 'A', path: ['a'], type: 'string' },
        { name: 'B', path: ['b'], type: 'string' },
      ],
    });
  });
});

describe('decodeHeaderValue', () => {
  it('decodes the base64 sentinel and rejects invalid values', () => {
    expect(decodeHeaderValue('plain')).toBe('plain');
    expect(decodeHeaderValue('=?base64?SGVsbG8sIOS4lueVjA==?=')).toBe('Hello, 世界');
    expect(decodeHeaderValue('bad\u0001')).toBeUndefined();
    expect(decodeHeaderValue('=?base64?//79?=')).toBeUndefined(); // not UTF-8
  });

  it('takes canonical Base64 only and treats a half sentinel as literal', () => {
    expect(decodeHeaderValue('=?base64?SGVsbG8=?=')).toBe('Hello');
    expect(decodeHeaderValue('=?base64?SGVsbG8?=')).toBeUndefined(); // missing padding
    expect(decodeHeaderValue('=?base64?SGVs!!!bG8=?=')).toBeUndefined();
    expect(decodeHeaderValue('=?base64?SGVsbG8=')).toBe('=?base64?SGVsbG8=');
    expect(decodeHeaderValue('SGVsbG8=?=')).toBe('SGVsbG8=?=');
    expect(decodeHeaderValue('=?base64??=')).toBe(''); // the encoding of the empty string
  });

  it.each([
    'us-west1',
    'Hello, 世界',
    ' padded ',
    'line1\nline2',
    '=?base64?literal?=',
    '',
    '\u0000',
  ])('decodes what encodeHeaderValue encoded: %j', (value) => {
    expect(decodeHeaderValue(encodeHeaderValue(value))).toBe(value);
  });
});

describe('bodyEncodingProblem', () => {
  it('takes UTF-8 in any spelling and identity, and names anything else, cut to 40 characters', () => {
    for (const charset of [undefined, 'utf-8', 'UTF-8', 'utf8', 'UTF8'])
      expect(bodyEncodingProblem(charset, null)).toBeUndefined();
    for (const coding of ['identity', ' Identity ', ''])
      expect(bodyEncodingProblem(undefined, coding)).toBeUndefined();
    // As /^\s*(identity)?\s*$/i reads it, which backtracked quadratically over the white space.
    for (const coding of [
      '\tIDENTITY\u00a0',
      '\u00a0',
      ' '.repeat(16_000),
      'identity x',
      'x',
      `${' '.repeat(9)}x`,
    ])
      expect(bodyEncodingProblem(undefined, coding) === undefined, JSON.stringify(coding)).toBe(
        /^\s*(identity)?\s*$/i.test(coding),
      );
    expect(bodyEncodingProblem('latin1', null)).toBe(
      'Content-Type charset latin1 is not supported: send UTF-8 (charset=utf-8 or none)',
    );
    expect(bodyEncodingProblem(undefined, 'gzip')).toBe(
      'Content-Encoding gzip is not supported: send the body uncompressed',
    );
    expect(bodyEncodingProblem(`${'x'.repeat(39)}\u{1F600}`, null)).toBe(
      `Content-Type charset ${'x'.repeat(39)}… is not supported: send UTF-8 (charset=utf-8 or none)`,
    );
    // Header bytes arrive as characters up to U+00FF: C1 controls and a tab are shown as U+FFFD.
    expect(bodyEncodingProblem(undefined, 'x\u009b2J\u0085\tgz')).toBe(
      'Content-Encoding x\ufffd2J\ufffd\ufffdgz is not supported: send the body uncompressed',
    );
    expect(bodyEncodingProblem('\u009b31m', null)).toContain('charset \ufffd31m is');
  });
});

describe('hasStrayJoiner and STRAY_JOINER', () => {
  it.each([
    // Where they join nothing: text that reads as other text.
    ['api\u200d-staging', true],
    ['api\ufe0f-staging', true],
    ['\u200dabc', true],
    ['abc\u200c', true],
    ['a \u200d b', true],
    ['\ufe0f', true],
    ['1\ufe0f', true],
    ['1\ufe0e', true],
    ['日本\u200cx', true],
    ['api\u034f-staging', true],
    ['caf\u00e9\u200c\u00e8', true],
    ['прод\u200dакшн', true],
    ['сервис\u200d１', true],
    ['прод\u200d–staging', true],
    ['é\u200d\u200dé', true],
    ['прод\ufe00', true],
    ['café\ufe0f', true],
    ['é\u200d\ufe0f', true],
    ['cafe\u0301\u200c', true],
    ['👩\u200dabc', true],
    ['👩\u200d', true],
    ['0\ufe00', true],
    ['Auf\u200clage', true],
    // Where they join something: emoji, joining and Indic scripts, standardized variants.
    ['👩\u200d💻', false],
    ['❤\ufe0f', false],
    ['#\ufe0f\u20e3', false],
    ['1\ufe0f\u20e3', false],
    ['👁\ufe0f\u200d🗨\ufe0f', false],
    ['🏳\ufe0f\u200d🌈', false],
    ['👩🏽\u200d💻', false],
    ['می\u200cخواهم', false],
    ['क्\u200dष', false],
    ['क्\u200cष', false],
    ['ع\u200d', false],
    ['بِ\u200cب', false],
    ['葛\ufe00', false],
    ['©\ufe0f', false],
    ['☺\ufe0e', false],
    ['e\u034f\u0301', false],
    ['plain', false],
    // Marks between the letter and the joiner: the letter decides.
    ['e\u0301\u0301\u200d', true],
    ['क\u094d\u0301\u200dष', false],
    ['👩\u0301\u200d💻', false],
    ['👩\u0301\u200dabc', true],
  ])('%j: %s', (text, stray) => {
    expect(hasStrayJoiner(text)).toBe(stray);
    // The global pattern keeps no state between calls.
    expect(hasStrayJoiner(text)).toBe(stray);
    expect(text.replace(STRAY_JOINER, '\ufffd').includes('\ufffd')).toBe(stray);
  });

  it('tries no look-behind that scans back over a run before a joiner has matched', () => {
    // A look-behind with `*` or `+` at the start of an alternative is tried at every position, and
    // scans back over the whole run of marks there: quadratic, seconds for 10,000 marks.
    const leading = (alternative: string): string[] => {
      const groups: string[] = [];
      let i = 0;
      while (alternative.startsWith('(?<', i)) {
        let depth = 0;
        let inClass = false;
        let j = i;
        for (; j < alternative.length; j++) {
          const c = alternative[j];
          if (c === '\\') j++;
          else if (inClass) inClass = c !== ']';
          else if (c === '[') inClass = true;
          else if (c === '(') depth++;
          else if (c === ')' && --depth === 0) break;
        }
        groups.push(alternative.slice(i, j + 1));
        i = j + 1;
      }
      return groups;
    };
    const alternatives = STRAY_JOINER.source.split(/\|(?=\(\?<|\\u|\[\\u)/);
    expect(alternatives.length).toBeGreaterThanOrEqual(8);
    for (const alternative of alternatives)
      for (const group of leading(alternative))
        expect(group.replace(/\[(\\.|[^\]])*\]/g, '[]')).not.toMatch(/[*+]/);
  });

  it('scans back over at most 32 marks: millions of them neither overflow the stack nor join', () => {
    // An unbounded scan back (`\p{M}*`) threw RangeError from about 4.2 million marks.
    expect(hasStrayJoiner(`x${'\u0301'.repeat(5_000_000)}\u200d`)).toBe(true);
    expect(hasStrayJoiner(`\u0628${'\u064b'.repeat(5_000_000)}\u200d`)).toBe(true);
    // Within the bound, the letter under the marks decides, as before.
    expect(hasStrayJoiner(`\u0628${'\u064b'.repeat(32)}\u200d\u0628`)).toBe(false);
    expect(hasStrayJoiner(`\u0628${'\u064b'.repeat(33)}\u200d\u0628`)).toBe(true);
    expect(hasStrayJoiner(`👩${'\u0301'.repeat(32)}\u200d💻`)).toBe(false);
  });
});

describe('shownText', () => {
  it('shows controls, format, separator, default-ignorable, private-use and unassigned characters as U+FFFD', () => {
    expect(shownText('a\u202eb\u0000c\u2028d\ud800', 40)).toBe('a\ufffdb\ufffdc\ufffdd\ufffd');
    // A font may draw these as nothing: `prod\u{e000}-db` would read as `prod-db`.
    expect(shownText('prod\ue000-db \u0378\u3164\u115f\u{10fffd}\u2800', 40)).toBe(
      'prod\ufffd-db \ufffd\ufffd\ufffd\ufffd\ufffd',
    );
    // CGJ stays, as in the gate's questions.
    expect(shownText('a\u0301\u034f\u0301', 40)).toBe('a\u0301\u034f\u0301');
    // What emoji need stays: ZWJ and the variation selectors.
    expect(shownText('\u2764\ufe0f \u{1f469}\u200d\u{1f4bb}', 40)).toBe(
      '\u2764\ufe0f \u{1f469}\u200d\u{1f4bb}',
    );
  });
});
