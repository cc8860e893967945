import { describe, expect, it } from 'vitest';
import {
  ErrorCode,
  field,
  formSchema,
  HeaderMismatchErrorSchema,
  headerMismatchError,
  missingRequiredMetaKeys,
  RequestedSchemaSchema,
  UnsupportedProtocolVersionErrorSchema,
  unsupportedVersionError,
  validateFormContent,
} from '../src/index.js';

describe('field builders and formSchema', () => {
  it('builds every field kind of the subset, as the schema names them', () => {
    const schema = formSchema(
      {
        email: field.string({ title: 'Email', format: 'email', maxLength: 64 }),
        age: field.integer({ minimum: 18, maximum: 130, default: 30 }),
        ratio: field.number({ minimum: 0, maximum: 1 }),
        agree: field.boolean({ title: 'Agree', default: false }),
        color: field.select(['red', 'green'], { default: 'red' }),
        note: field.select([
          { const: 'n1', title: 'Roadmap' },
          { const: 'n2', title: 'Draft' },
        ]),
        tags: field.multiSelect(['a', 'b', 'c'], { minItems: 1, maxItems: 2 }),
        titled: field.multiSelect([{ const: 'x', title: 'Ex' }], { default: ['x'] }),
      },
      { required: ['email', 'agree'] },
    );
    expect(schema).toEqual({
      type: 'object',
      properties: {
        email: { type: 'string', title: 'Email', format: 'email', maxLength: 64 },
        age: { type: 'integer', minimum: 18, maximum: 130, default: 30 },
        ratio: { type: 'number', minimum: 0, maximum: 1 },
        agree: { type: 'boolean', title: 'Agree', default: false },
        color: { type: 'string', enum: ['red', 'green'], default: 'red' },
        note: {
          type: 'string',
          oneOf: [
            { const: 'n1', title: 'Roadmap' },
            { const: 'n2', title: 'Draft' },
          ],
        },
        tags: {
          type: 'array',
          items: { type: 'string', enum: ['a', 'b', 'c'] },
          minItems: 1,
          maxItems: 2,
        },
        titled: { type: 'array', items: { anyOf: [{ const: 'x', title: 'Ex' }] }, default: ['x'] },
      },
      required: ['email', 'agree'],
    });
    expect(RequestedSchemaSchema.parse(schema)).toEqual(schema);
    // The built form validates answers: the wrong field is named.
    const bad = validateFormContent(schema, { email: 'nope', agree: true, note: 'n3' });
    expect(bad.ok ? [] : bad.issues.map((i) => i.field)).toEqual(['email', 'note']);
  });

  it.each([
    ['min above max length', () => field.string({ minLength: 5, maxLength: 2 })],
    ['min above max', () => field.integer({ minimum: 3, maximum: 1 })],
    ['non-finite bound', () => field.number({ maximum: Number.POSITIVE_INFINITY })],
    ['empty enum', () => field.select([])],
    ['duplicate option', () => field.select(['a', 'a'])],
    ['minItems above maxItems', () => field.multiSelect(['a'], { minItems: 2, maxItems: 1 })],
  ])('rejects %s with a TypeError', (_label, build) => {
    expect(build).toThrow(TypeError);
  });

  it('rejects a required name that is not a field, and a default the field refuses', () => {
    expect(() => formSchema({ a: field.boolean() }, { required: ['b'] })).toThrow(/"b"/);
    expect(() => formSchema({ a: field.boolean() }, { required: ['a', 'a'] })).toThrow(TypeError);
    expect(() => formSchema({ age: field.integer({ minimum: 18, default: 12 }) })).toThrow(
      /default of "age"/,
    );
    expect(() => formSchema({ c: field.select(['x'], { default: 'y' }) })).toThrow(
      /default of "c"/,
    );
    expect(() =>
      formSchema({ d: field.string({ format: 'date', default: '2023-02-29' }) }),
    ).toThrow(/default of "d"/);
  });

  it('leaves required out when nothing is required', () => {
    expect(formSchema({ a: field.boolean() })).toEqual({
      type: 'object',
      properties: { a: { type: 'boolean' } },
    });
  });
});

describe('error builders and request _meta', () => {
  it('headerMismatchError and unsupportedVersionError match their schema types', () => {
    const mismatch = { jsonrpc: '2.0', id: 1, error: headerMismatchError('Mcp-Name differs') };
    expect(HeaderMismatchErrorSchema.parse(mismatch)).toEqual(mismatch);
    expect(mismatch.error.code).toBe(ErrorCode.HeaderMismatch);
    const version = {
      jsonrpc: '2.0',
      id: 2,
      error: unsupportedVersionError('1900-01-01', ['2026-07-28']),
    };
    expect(UnsupportedProtocolVersionErrorSchema.parse(version)).toEqual(version);
    expect(version.error.data).toEqual({ requested: '1900-01-01', supported: ['2026-07-28'] });
    expect(
      UnsupportedProtocolVersionErrorSchema.safeParse({
        ...version,
        error: { ...version.error, data: {} },
      }).success,
    ).toBe(false);
  });

  it('missingRequiredMetaKeys names the required keys a _meta lacks', () => {
    const v = 'io.modelcontextprotocol/protocolVersion';
    const c = 'io.modelcontextprotocol/clientCapabilities';
    expect(missingRequiredMetaKeys({ [v]: '2026-07-28', [c]: {} })).toEqual([]);
    expect(missingRequiredMetaKeys({ [c]: {} })).toEqual([v]);
    expect(missingRequiredMetaKeys({ [v]: '2026-07-28' })).toEqual([c]);
    for (const bad of [undefined, null, 'x', [], 1])
      expect(missingRequiredMetaKeys(bad)).toEqual([v, c]);
  });
});
