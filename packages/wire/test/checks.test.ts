import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CallToolRequestParamsSchema,
  isCallToolParams,
  isRequestMeta,
  RequestMetaSchema,
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
