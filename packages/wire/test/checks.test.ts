import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CallToolRequestParamsSchema,
  InputRequiredResultSchema,
  isCallToolParams,
  isCommonInputRequiredResult,
  isRequestMeta,
  RequestMetaSchema,
  retryFieldsProblem,
} from '../src/index.js';

const ToolParams = CallToolRequestParamsSchema.omit({ _meta: true });

/** A value that is sometimes right for a field and often wrong in some way. */
const anyValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.constantFrom(2 ** 53, -(2 ** 53), 1.5, -0, 0, true, false, null, ''),
  fc.constant(undefined),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  fc.constant({}),
  fc.constant([]),
);
/** An object whose members are each sometimes absent, sometimes right, sometimes wrong. */
function shaped(fields: Record<string, fc.Arbitrary<unknown>>) {
  const entries = Object.entries(fields).map(([key, right]) =>
    fc
      .option(fc.oneof({ weight: 3, arbitrary: right }, { weight: 1, arbitrary: anyValue }), {
        nil: undefined,
      })
      .map((value) => [key, value] as const),
  );
  return fc
    .tuple(
      fc.tuple(...entries),
      fc.dictionary(fc.string({ maxLength: 4 }), anyValue, { maxKeys: 2 }),
    )
    .map(([members, extra]) => {
      const out: Record<string, unknown> = { ...extra };
      for (const [key, value] of members) if (value !== undefined) out[key] = value;
      return out;
    });
}
const jsonObject = fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), {
  maxKeys: 3,
});
const icon = shaped({
  src: fc.string(),
  mimeType: fc.string(),
  sizes: fc.array(fc.string(), { maxLength: 2 }),
  theme: fc.constantFrom('light', 'dark', 'dim'),
});
const implementation = shaped({
  name: fc.string(),
  version: fc.string(),
  title: fc.string(),
  icons: fc.array(icon, { maxLength: 2 }),
  websiteUrl: fc.string(),
});
const capabilities = shaped({
  elicitation: shaped({ form: jsonObject, url: jsonObject }),
  sampling: shaped({ context: jsonObject, tools: jsonObject }),
  roots: jsonObject,
  experimental: fc.dictionary(fc.string({ maxLength: 4 }), jsonObject, { maxKeys: 2 }),
  extensions: fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(jsonObject, anyValue), {
    maxKeys: 2,
  }),
});
const meta = shaped({
  progressToken: fc.oneof(fc.string(), fc.integer(), fc.double()),
  'io.modelcontextprotocol/protocolVersion': fc.constant('2026-07-28'),
  'io.modelcontextprotocol/clientInfo': implementation,
  'io.modelcontextprotocol/clientCapabilities': capabilities,
  'io.modelcontextprotocol/logLevel': fc.constantFrom('debug', 'error', 'emergency', 'loud'),
  traceparent: fc.string(),
  tracestate: fc.string(),
  baggage: fc.string(),
});
const toolParams = shaped({
  name: fc.string(),
  arguments: jsonObject,
  inputResponses: fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(jsonObject, anyValue), {
    maxKeys: 2,
  }),
  requestState: fc.string(),
});

/** Values as a server gets them: through JSON (no undefined members, `__proto__` an own key). */
const viaJson = (v: unknown) => JSON.parse(JSON.stringify(v) ?? 'null') as unknown;

describe('in-place checks agree with the zod schemas', () => {
  it('isRequestMeta accepts exactly what RequestMetaSchema accepts', () => {
    fc.assert(
      fc.property(
        fc.oneof({ weight: 9, arbitrary: meta }, { weight: 1, arbitrary: anyValue }),
        (raw) => {
          const v = viaJson(raw);
          expect(isRequestMeta(v), JSON.stringify(v)).toBe(RequestMetaSchema.safeParse(v).success);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('isCallToolParams accepts exactly what CallToolRequestParamsSchema without _meta accepts', () => {
    fc.assert(
      fc.property(
        fc.oneof({ weight: 9, arbitrary: toolParams }, { weight: 1, arbitrary: anyValue }),
        (raw) => {
          const v = viaJson(raw);
          expect(isCallToolParams(v), JSON.stringify(v)).toBe(ToolParams.safeParse(v).success);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('agree on hand-picked edge cases', () => {
    const metas: unknown[] = [
      {},
      { progressToken: 2 ** 53 },
      { progressToken: 2 ** 53 - 1 },
      { progressToken: 1.5 },
      { progressToken: -0 },
      JSON.parse('{"__proto__": {"x": 1}}'),
      JSON.parse(
        '{"io.modelcontextprotocol/clientCapabilities": {"experimental": {"__proto__": 1}}}',
      ),
      JSON.parse(
        '{"io.modelcontextprotocol/clientCapabilities": {"experimental": {"__proto__": {}}}}',
      ),
      { 'io.modelcontextprotocol/clientCapabilities': { elicitation: [] } },
      { 'io.modelcontextprotocol/clientCapabilities': { roots: [] } },
      {
        'io.modelcontextprotocol/clientInfo': {
          name: 'a',
          version: '1',
          icons: [{ src: 'x', theme: 'dim' }],
        },
      },
      { 'io.modelcontextprotocol/logLevel': 'warning' },
      { 'io.modelcontextprotocol/logLevel': 'WARNING' },
      [],
      null,
      'meta',
    ];
    for (const v of metas)
      expect(isRequestMeta(v), JSON.stringify(v)).toBe(RequestMetaSchema.safeParse(v).success);
    const params: unknown[] = [
      { name: 'x' },
      { name: 'x', arguments: [] },
      { name: 'x', inputResponses: { a: [] } },
      { name: 'x', inputResponses: { a: { action: 'accept' } }, requestState: 'v1' },
      JSON.parse('{"name": "x", "inputResponses": {"__proto__": 5}}'),
      { name: 1 },
      {},
    ];
    for (const v of params)
      expect(isCallToolParams(v), JSON.stringify(v)).toBe(ToolParams.safeParse(v).success);
  });
});

const field = fc.oneof(
  shaped({
    type: fc.constant('string'),
    title: fc.string(),
    description: fc.string(),
    enum: fc.array(fc.string(), { maxLength: 4 }),
    enumNames: fc.array(fc.string(), { maxLength: 2 }),
    default: fc.string(),
  }),
  shaped({
    type: fc.constantFrom('string', 'str'),
    title: fc.string(),
    minLength: fc.integer({ min: -2, max: 5 }),
    maxLength: fc.oneof(fc.nat(9), fc.double()),
    format: fc.constantFrom('email', 'uri', 'date', 'date-time', 'time'),
    default: fc.string(),
    oneOf: fc.array(shaped({ const: fc.string(), title: fc.string() }), { maxLength: 2 }),
  }),
  shaped({
    type: fc.constantFrom('number', 'integer'),
    minimum: fc.double(),
    maximum: fc.integer(),
    default: fc.oneof(fc.double(), fc.string()),
  }),
  shaped({ type: fc.constant('boolean'), default: fc.oneof(fc.boolean(), fc.string()) }),
  shaped({
    type: fc.constant('array'),
    items: shaped({ type: fc.constant('string'), enum: fc.array(fc.string(), { maxLength: 2 }) }),
  }),
);
const formElicitation = shaped({
  method: fc.constantFrom('elicitation/create', 'elicitation/create', 'roots/list'),
  params: shaped({
    mode: fc.constantFrom('form', 'url'),
    message: fc.string(),
    url: fc.constant('https://example.com/approve'),
    requestedSchema: shaped({
      $schema: fc.string(),
      type: fc.constantFrom('object', 'object', 'array'),
      properties: fc.dictionary(fc.string({ maxLength: 6 }), field, { maxKeys: 4 }),
      required: fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }),
    }),
    _meta: jsonObject,
  }),
});
const inputRequired = shaped({
  resultType: fc.constantFrom('input_required', 'input_required', 'complete'),
  inputRequests: fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(formElicitation, anyValue), {
    maxKeys: 3,
  }),
  requestState: fc.string(),
  _meta: jsonObject,
});

/** Every path to a member or element of `v` (JSON data). */
function pathsOf(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (v === null || typeof v !== 'object') return [];
  const out: (string | number)[][] = [];
  for (const [k, child] of Object.entries(v)) {
    const here = [...at, Array.isArray(v) ? Number(k) : k];
    out.push(here, ...pathsOf(child, here));
  }
  return out;
}

/** `v` with the member at `path` replaced by `value`, or deleted when `value` is undefined. */
function mutate(v: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(v) as Record<string | number, unknown>;
  let parent = copy;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (value === undefined) delete parent[last];
  else parent[last] = value;
  return copy;
}

/** A valid common question, then one member changed to something often wrong, or removed. */
const nearlyCommon = fc
  .tuple(
    fc.record({
      resultType: fc.constant('input_required'),
      requestState: fc.string(),
      inputRequests: fc.dictionary(
        fc.string({ minLength: 1, maxLength: 6 }),
        fc.record({
          method: fc.constant('elicitation/create'),
          params: fc.record({
            mode: fc.constant('form'),
            message: fc.string(),
            requestedSchema: fc.record({
              type: fc.constant('object'),
              properties: fc.dictionary(
                fc.string({ minLength: 1, maxLength: 6 }),
                fc.oneof(
                  fc.record({
                    type: fc.constant('string'),
                    title: fc.string(),
                    enum: fc.array(fc.string(), { maxLength: 3 }),
                  }),
                  fc.record({
                    type: fc.constant('string'),
                    minLength: fc.nat(5),
                    format: fc.constant('email'),
                  }),
                  fc.record({
                    type: fc.constantFrom('number', 'integer'),
                    minimum: fc.integer(),
                    default: fc.double({ noNaN: true, noDefaultInfinity: true }),
                  }),
                  fc.record({
                    type: fc.constant('boolean'),
                    description: fc.string(),
                    default: fc.boolean(),
                  }),
                ),
                { minKeys: 1, maxKeys: 3 },
              ),
              required: fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }),
            }),
          }),
        }),
        { minKeys: 1, maxKeys: 2 },
      ),
    }),
    fc.nat(),
    fc.oneof(anyValue, fc.constant(undefined)),
  )
  .map(([valid, pick, value]) => {
    const v = viaJson(valid);
    const paths = pathsOf(v);
    return viaJson(mutate(v, paths[pick % paths.length] as (string | number)[], value));
  });

describe('isCommonInputRequiredResult (one-sided)', () => {
  it('answers true only where InputRequiredResultSchema accepts', () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          { weight: 6, arbitrary: nearlyCommon },
          { weight: 3, arbitrary: inputRequired },
          { weight: 1, arbitrary: anyValue },
        ),
        (v) => {
          if (!isCommonInputRequiredResult(viaJson(v))) return;
          accepted++;
          expect(InputRequiredResultSchema.safeParse(viaJson(v)).success, JSON.stringify(v)).toBe(
            true,
          );
        },
      ),
      { numRuns: 20_000 },
    );
    // The generator reaches the accepting side often enough for the property to mean something.
    expect(accepted).toBeGreaterThan(2000);
  });

  it('accepts the usual confirmation question, and leaves anything unusual to the schema', () => {
    const question = {
      resultType: 'input_required',
      requestState: 'v1.abc',
      inputRequests: {
        confirm_delete: {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: 'Delete which record?',
            requestedSchema: {
              type: 'object',
              properties: {
                record_id: { type: 'string', title: 'Record', enum: ['a', 'b'] },
                confirm: { type: 'boolean', title: 'Yes', default: false },
                note: { type: 'string', maxLength: 200 },
                count: { type: 'integer', minimum: 1 },
              },
              required: ['record_id', 'confirm'],
            },
          },
        },
      },
    };
    expect(isCommonInputRequiredResult(question)).toBe(true);
    expect(isCommonInputRequiredResult({ resultType: 'input_required', requestState: 's' })).toBe(
      true,
    );
    const unusual: unknown[] = [
      { resultType: 'input_required' },
      { ...question, _meta: {} },
      { ...question, requestState: 5 },
      { resultType: 'input_required', inputRequests: { a: { method: 'roots/list' } } },
      JSON.parse('{"resultType":"input_required","inputRequests":{"__proto__":{}}}'),
    ];
    for (const v of unusual) expect(isCommonInputRequiredResult(v), JSON.stringify(v)).toBe(false);
  });
});

describe('retryFieldsProblem', () => {
  it('names the first retry field that is not of its type, and nothing for well-typed ones', () => {
    expect(retryFieldsProblem({ inputResponses: null })).toEqual({
      param: 'inputResponses',
      problem: 'must be a JSON object',
    });
    expect(retryFieldsProblem({ inputResponses: [] })?.param).toBe('inputResponses');
    expect(retryFieldsProblem({ inputResponses: { ok: {}, confirm: 'accept' } })).toEqual({
      param: 'inputResponses.confirm',
      problem: 'must be a JSON object',
    });
    expect(retryFieldsProblem({ requestState: 5 })).toEqual({
      param: 'requestState',
      problem: 'must be a string',
    });
    expect(retryFieldsProblem({ inputResponses: { confirm: {} }, requestState: 'x' })).toBe(
      undefined,
    );
    expect(retryFieldsProblem({ name: 'tool' })).toBe(undefined);
  });

  it('agrees with isCallToolParams on generated params', () => {
    fc.assert(
      fc.property(fc.record({ inputResponses: anyValue, requestState: anyValue }), (params) => {
        const base = { name: 'tool', ...params };
        expect(retryFieldsProblem(base) === undefined).toBe(isCallToolParams(base));
      }),
    );
  });
});
