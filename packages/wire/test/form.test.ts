import { describe, expect, it } from 'vitest';
import {
  type FormValidation,
  type RequestedSchema,
  RequestedSchemaSchema,
  validateFormContent,
} from '../src/index.js';

/** Parse a schema through the package's own zod schema, as a server would before sending it. */
function form(properties: Record<string, unknown>, required?: string[]): RequestedSchema {
  return RequestedSchemaSchema.parse({
    type: 'object',
    properties,
    ...(required ? { required } : {}),
  });
}

function expectOk(result: FormValidation, value?: Record<string, unknown>): void {
  expect(result).toEqual({ ok: true, value: value ?? (result.ok ? result.value : undefined) });
  expect(result.ok).toBe(true);
}

/** The failing fields, in order. */
function failing(result: FormValidation): string[] {
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.issues.map((i) => i.field);
}

function reasonFor(result: FormValidation, field: string): string {
  if (result.ok) throw new Error('expected issues');
  const issue = result.issues.find((i) => i.field === field);
  if (!issue) throw new Error(`no issue for ${field}`);
  expect(issue.reason.length).toBeGreaterThan(0);
  return issue.reason;
}

describe('validateFormContent: string fields', () => {
  const schema = form({ name: { type: 'string', minLength: 2, maxLength: 5 } });

  it('accepts lengths within the bounds, inclusive', () => {
    for (const name of ['ab', 'abc', 'abcde'])
      expectOk(validateFormContent(schema, { name }), { name });
  });

  it('rejects too short and too long strings, naming the field', () => {
    const short = validateFormContent(schema, { name: 'a' });
    expect(failing(short)).toEqual(['name']);
    expect(reasonFor(short, 'name')).toContain('at least 2');
    const long = validateFormContent(schema, { name: 'abcdef' });
    expect(failing(long)).toEqual(['name']);
    expect(reasonFor(long, 'name')).toContain('at most 5');
  });

  it('counts code points, not UTF-16 units', () => {
    expectOk(validateFormContent(schema, { name: '😀😀😀😀😀' }));
    expect(failing(validateFormContent(schema, { name: '😀' }))).toEqual(['name']);
  });

  it('rejects non-strings', () => {
    for (const name of [12, true, ['ab'], { v: 'ab' }, null]) {
      expect(failing(validateFormContent(schema, { name }))).toEqual(['name']);
    }
  });

  it('rejects free text holding U+0000, with or without other constraints, naming the field', () => {
    for (const [field, note] of [
      [{ type: 'string' }, 'bad\u0000reason'],
      [{ type: 'string', maxLength: 50 }, '\u0000'],
      [{ type: 'string', format: 'email' }, 'a\u0000@b.example'],
    ] as const) {
      const result = validateFormContent(form({ note: field }), { note });
      expect(failing(result)).toEqual(['note']);
      expect(reasonFor(result, 'note')).toBe('must not contain U+0000 (NUL)');
    }
    // Other control characters are text a record keeps: accepted.
    expectOk(validateFormContent(form({ note: { type: 'string' } }), { note: 'a\u0001\tb' }));
  });

  it('accepts any string when no constraint is given', () => {
    expectOk(validateFormContent(form({ note: { type: 'string' } }), { note: '' }));
    expectOk(
      validateFormContent(form({ note: { type: 'string', title: 'Note' } }), {
        note: 'x'.repeat(10_000),
      }),
    );
  });

  it.each([
    [
      'email',
      ['a@b.co', 'octocat@github.com', 'first.last+tag@sub.example.org'],
      ['', 'plain', 'a@b', '@b.co', 'a @b.co', 'a@b .co'],
    ],
    [
      'uri',
      ['https://example.com/x?y=1', 'notes://team/roadmap', 'mailto:a@b.co', 'urn:isbn:0451450523'],
      ['', 'example.com', '/relative/path', 'not a uri'],
    ],
    [
      'date',
      ['2024-02-29', '2026-07-28', '1999-12-31', '0001-01-01'],
      [
        '',
        '2024-2-29',
        '2024-13-01',
        '2024-00-10',
        '2023-02-29',
        '2024-02-30',
        '2024-04-31',
        '2024-01-32',
        '2024-01-01T00:00:00Z',
        '28/07/2026',
      ],
    ],
    [
      'date-time',
      [
        '2026-07-28T10:20:30Z',
        '2026-07-28T10:20:30.123Z',
        '2026-07-28T10:20:30+02:00',
        '2026-07-28T23:59:59-05:30',
        '2024-02-29T00:00:00Z',
      ],
      [
        '',
        '2026-07-28',
        '2026-07-28T10:20:30',
        '2026-07-28 10:20:30Z',
        '2026-07-28T24:00:00Z',
        '2026-07-28T10:60:00Z',
        '2023-02-29T10:00:00Z',
        '2026-07-28T10:20:30+24:00',
      ],
    ],
  ])('format %s accepts valid and rejects invalid values', (format, valid, invalid) => {
    const schema = form({ v: { type: 'string', format } });
    for (const v of valid)
      expect(validateFormContent(schema, { v }), `${format} ${v}`).toEqual({
        ok: true,
        value: { v },
      });
    for (const v of invalid) {
      const result = validateFormContent(schema, { v });
      expect(result.ok, `${format} ${JSON.stringify(v)} should be rejected`).toBe(false);
      expect(failing(result)).toEqual(['v']);
    }
  });
});

describe('validateFormContent: number and integer fields', () => {
  const schema = form({
    age: { type: 'integer', minimum: 18, maximum: 130 },
    score: { type: 'number', minimum: -1.5, maximum: 1.5 },
  });

  it('accepts values within inclusive bounds', () => {
    expectOk(validateFormContent(schema, { age: 18, score: -1.5 }));
    expectOk(validateFormContent(schema, { age: 130, score: 1.5 }));
    expectOk(validateFormContent(schema, { age: 40, score: 0.25 }));
    expectOk(validateFormContent(schema, { age: 40.0 }));
  });

  it('rejects values out of bounds, naming each field', () => {
    const low = validateFormContent(schema, { age: 17, score: -1.51 });
    expect(failing(low)).toEqual(['age', 'score']);
    expect(reasonFor(low, 'age')).toContain('18');
    const high = validateFormContent(schema, { age: 131, score: 1.6 });
    expect(failing(high)).toEqual(['age', 'score']);
    expect(reasonFor(high, 'score')).toContain('1.5');
  });

  it('rejects a fraction for an integer but accepts it for a number', () => {
    const result = validateFormContent(schema, { age: 18.5, score: 0.5 });
    expect(failing(result)).toEqual(['age']);
    expect(reasonFor(result, 'age')).toContain('integer');
  });

  it('rejects non-numbers, numeric strings and non-finite numbers', () => {
    for (const v of ['40', true, null, [40], Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(failing(validateFormContent(schema, { score: v }))).toEqual(['score']);
    }
  });

  it('accepts any finite number without bounds', () => {
    expectOk(validateFormContent(form({ n: { type: 'number' } }), { n: -1e300 }));
    expectOk(validateFormContent(form({ n: { type: 'integer' } }), { n: 0 }));
  });
});

describe('validateFormContent: boolean fields', () => {
  const schema = form({ confirm: { type: 'boolean', default: false } }, ['confirm']);

  it('accepts true and false', () => {
    expectOk(validateFormContent(schema, { confirm: true }), { confirm: true });
    expectOk(validateFormContent(schema, { confirm: false }), { confirm: false });
  });

  it('rejects truthy look-alikes', () => {
    for (const confirm of ['true', 1, 0, 'yes', [true]]) {
      const result = validateFormContent(schema, { confirm });
      expect(failing(result)).toEqual(['confirm']);
      expect(reasonFor(result, 'confirm')).toContain('boolean');
    }
  });
});

describe('validateFormContent: single-select enums', () => {
  it('untitled: accepts an offered value and rejects anything else', () => {
    const schema = form({
      color: { type: 'string', enum: ['red', 'green'], enumNames: ['Red', 'Green'] },
    });
    expectOk(validateFormContent(schema, { color: 'green' }), { color: 'green' });
    for (const color of ['blue', 'Red', 'RED', '', ['red'], 1]) {
      expect(failing(validateFormContent(schema, { color }))).toEqual(['color']);
    }
    expect(reasonFor(validateFormContent(schema, { color: 'blue' }), 'color')).toContain('offered');
  });

  it('titled (oneOf): accepts a const and rejects a title', () => {
    const schema = form({
      note: {
        type: 'string',
        oneOf: [
          { const: 'note-1', title: 'Roadmap (12 KB)' },
          { const: 'note-2', title: 'Roadmap (draft)' },
        ],
      },
    });
    expectOk(validateFormContent(schema, { note: 'note-2' }), { note: 'note-2' });
    expect(failing(validateFormContent(schema, { note: 'Roadmap (12 KB)' }))).toEqual(['note']);
    expect(failing(validateFormContent(schema, { note: 'note-3' }))).toEqual(['note']);
  });

  it('an enum field accepts exactly one of its values', () => {
    const schema = form({ c: { type: 'string', enum: ['x'] } });
    expectOk(validateFormContent(schema, { c: 'x' }));
  });
});

describe('validateFormContent: multi-select enums', () => {
  const untitled = form({
    tags: {
      type: 'array',
      minItems: 1,
      maxItems: 2,
      items: { type: 'string', enum: ['a', 'b', 'c'] },
    },
  });
  const titled = form({
    tags: {
      type: 'array',
      minItems: 1,
      maxItems: 2,
      items: {
        anyOf: [
          { const: 'a', title: 'Alpha' },
          { const: 'b', title: 'Beta' },
          { const: 'c', title: 'Gamma' },
        ],
      },
    },
  });

  it.each([
    ['untitled', untitled],
    ['titled', titled],
  ])('%s: accepts offered values within minItems..maxItems', (_label, schema) => {
    expectOk(validateFormContent(schema, { tags: ['a'] }), { tags: ['a'] });
    expectOk(validateFormContent(schema, { tags: ['c', 'a'] }), { tags: ['c', 'a'] });
  });

  it.each([
    ['untitled', untitled],
    ['titled', titled],
  ])('%s: rejects too few, too many, unoffered, duplicated and non-string items', (_label, schema) => {
    const cases: [unknown, string][] = [
      [[], 'at least 1'],
      [['a', 'b', 'c'], 'at most 2'],
      [['a', 'd'], 'not offered'],
      [['Alpha'], 'not offered'],
      [['a', 'a'], 'twice'],
      [['a', 1], 'list of strings'],
      ['a', 'list of strings'],
      [null, 'list of strings'],
    ];
    for (const [tags, reason] of cases) {
      const result = validateFormContent(schema, { tags });
      expect(failing(result)).toEqual(['tags']);
      expect(reasonFor(result, 'tags')).toContain(reason);
    }
  });

  it('without bounds accepts an empty selection', () => {
    const schema = form({ tags: { type: 'array', items: { type: 'string', enum: ['a'] } } });
    expectOk(validateFormContent(schema, { tags: [] }));
  });
});

describe('validateFormContent: the content object', () => {
  const schema = form(
    {
      name: { type: 'string' },
      confirm: { type: 'boolean' },
      note: { type: 'string' },
    },
    ['name', 'confirm'],
  );

  it('accepts content with the required fields and leaves optional ones out', () => {
    expectOk(validateFormContent(schema, { name: 'x', confirm: true }), {
      name: 'x',
      confirm: true,
    });
    expectOk(validateFormContent(schema, { name: 'x', confirm: true, note: 'n' }));
  });

  it('reports every missing required field by name', () => {
    const result = validateFormContent(schema, {});
    expect(failing(result)).toEqual(['name', 'confirm']);
    expect(reasonFor(result, 'name')).toContain('required');
    expect(failing(validateFormContent(schema, { name: 'x' }))).toEqual(['confirm']);
  });

  it('reads null and undefined as missing for a required field, reported once', () => {
    const result = validateFormContent(schema, { name: null, confirm: undefined });
    expect(failing(result)).toEqual(['name', 'confirm']);
  });

  it('rejects null for an optional field (null is not a form value)', () => {
    const result = validateFormContent(schema, { name: 'x', confirm: true, note: null });
    expect(failing(result)).toEqual(['note']);
  });

  it('rejects unknown fields, naming them', () => {
    const result = validateFormContent(schema, {
      name: 'x',
      confirm: true,
      admin: true,
      Name: 'y',
    });
    expect(failing(result)).toEqual(['admin', 'Name']);
    expect(reasonFor(result, 'admin')).toContain('not a field');
  });

  it('rejects fields named after Object.prototype members', () => {
    for (const key of ['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__']) {
      const content = JSON.parse(`{"name":"x","confirm":true,${JSON.stringify(key)}:"y"}`);
      expect(failing(validateFormContent(schema, content)), key).toEqual([key]);
    }
  });

  it('rejects content that is not an object, with the empty field name', () => {
    for (const content of [undefined, null, 'x', 42, true, [], [{ name: 'x' }]]) {
      const result = validateFormContent(schema, content);
      expect(result).toEqual({ ok: false, issues: [{ field: '', reason: expect.any(String) }] });
    }
  });

  it('collects issues of several fields at once', () => {
    const result = validateFormContent(schema, { confirm: 'yes', note: 3, extra: 1 });
    expect(failing(result).sort()).toEqual(['confirm', 'extra', 'name', 'note']);
  });

  it('a form without required fields accepts an empty object', () => {
    expectOk(validateFormContent(form({ a: { type: 'string' } }), {}), {});
  });
});

describe('validateFormContent: format email, as /^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$/ reads it', () => {
  const pattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
  const schema = form({ to: { type: 'string', format: 'email' } });
  const accepts = (to: string) => validateFormContent(schema, { to }).ok;

  it('agrees with the pattern on every short text over its alphabet, and on long ones', () => {
    const alphabet = ['a', '.', '@', ' ', '\u00a0', '\n'];
    const texts: string[] = [''];
    for (let length = 1; length <= 6; length++)
      for (const t of texts.filter((s) => s.length === length - 1))
        for (const c of alphabet) texts.push(t + c);
    expect(texts.length).toBeGreaterThan(50_000);
    for (const to of texts) expect(accepts(to), JSON.stringify(to)).toBe(pattern.test(to));
    for (const to of [
      `a@${'.'.repeat(4_000)} `,
      `a@${'.'.repeat(4_000)}a`,
      `a@a${'.'.repeat(4_000)}`,
      `${'.'.repeat(4_000)}@b.c`,
    ])
      expect(accepts(to)).toBe(pattern.test(to));
    expect(accepts('someone@example.com')).toBe(true);
  });
});
