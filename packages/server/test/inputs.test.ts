/**
 * The endpoint's input rules, in process (the adapter contract suite runs the
 * same rules over real HTTP through each adapter): schema dialects, what
 * `parse` and the context see, prompt arguments, pagination, logging, the
 * params walk and the rate limiter.
 */
import { textResult } from '@mrtr/wire';
import { describe, expect, it } from 'vitest';
import { createMcpEndpoint, type McpEndpointOptions, type ToolDefinition } from '../src/index.js';
import { inspectParams } from '../src/json-shape.js';
import { RateLimiter } from '../src/rate-limit.js';
import { META, post, rpc, send } from './helpers.js';

const seen: unknown[] = [];

function endpointWith(tools: ToolDefinition<never>[], extra: Partial<McpEndpointOptions> = {}) {
  return createMcpEndpoint({
    serverInfo: { name: 't', version: '1' },
    tools: tools as ToolDefinition<unknown>[],
    authenticate: () => ({ id: 'alice' }),
    onError: () => {},
    ...extra,
  });
}

const call = (name: string, args: unknown) => rpc('tools/call', { name, arguments: args });

describe('inputSchema dialects and compilation', () => {
  it('validates a draft-07 schema by its own rules', async () => {
    const endpoint = endpointWith([
      {
        name: 'old',
        inputSchema: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { n: { type: 'integer', exclusiveMinimum: 0 } },
          additionalProperties: false,
        },
        handler: () => textResult('ok'),
      },
    ]);
    expect((await send(endpoint, post(call('old', { n: 1 })))).body.result).toBeDefined();
    const bad = await send(endpoint, post(call('old', { n: 0 })));
    expect(bad.body.error).toMatchObject({ code: -32602, data: { argument: 'n' } });
  });

  it('refuses at creation a dialect it does not support, an invalid schema, an unresolvable $ref', () => {
    const tool = (inputSchema: unknown) =>
      ({ name: 't', inputSchema, handler: () => textResult('') }) as never;
    expect(() =>
      endpointWith([tool({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' })]),
    ).toThrow(/dialect/);
    expect(() =>
      endpointWith([tool({ type: 'object', properties: { a: { type: 'nope' } } })]),
    ).toThrow(/tool t: inputSchema cannot be compiled/);
    // Never fetched: a network $ref fails the creation instead.
    expect(() =>
      endpointWith([
        tool({ type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }),
      ]),
    ).toThrow(/cannot be compiled/);
  });
});

describe('what the handler and its context see', () => {
  it('a parse that returns something other than a plain object leaves ctx.arguments as received', async () => {
    class Args {
      constructor(readonly n: number) {}
    }
    const endpoint = endpointWith([
      {
        name: 'classy',
        inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
        parse: (raw) => new Args((raw as { n: number }).n) as never,
        handler: (args, ctx) => {
          seen.push([args, ctx.arguments]);
          return textResult('ok');
        },
      },
    ]);
    await send(endpoint, post(call('classy', { n: 3 })));
    expect(seen.at(-1)).toEqual([new Args(3), { n: 3 }]);
  });

  it('a parse that throws a plain Error gives -32602 with its message, clipped', async () => {
    const endpoint = endpointWith([
      {
        name: 'picky',
        inputSchema: { type: 'object' },
        parse: () => {
          throw new Error(`no ${'x'.repeat(1000)}`);
        },
        handler: () => textResult('never'),
      },
    ]);
    const r = await send(endpoint, post(call('picky', {})));
    expect(r.body.error.code).toBe(-32602);
    expect(r.body.error.message.length).toBeLessThan(300);
  });
});

describe('prompts, pagination, logging', () => {
  const prompts = [
    {
      name: 'greet',
      arguments: [{ name: 'who', required: true }],
      handler: (args: Record<string, string>) => ({
        resultType: 'complete' as const,
        messages: [
          { role: 'user' as const, content: { type: 'text' as const, text: args.who ?? '' } },
        ],
      }),
    },
  ];
  const endpoint = endpointWith([], {
    prompts,
    resources: [],
    logging: false,
  });

  it('an undeclared prompt argument is -32602 naming it', async () => {
    const r = await send(
      endpoint,
      post(rpc('prompts/get', { name: 'greet', arguments: { who: 'Bo', extra: 'x' } })),
    );
    expect(r.body.error).toMatchObject({ code: -32602, data: { argument: 'extra' } });
  });

  it('every list refuses a cursor it never issued', async () => {
    for (const method of [
      'tools/list',
      'prompts/list',
      'resources/list',
      'resources/templates/list',
    ]) {
      const r = await send(endpoint, post(rpc(method, { cursor: 'x' })));
      expect(r.body.error?.code, method).toBe(-32602);
    }
  });

  it('logging: false declares no logging and sends no notifications/message', async () => {
    const quiet = endpointWith(
      [
        {
          name: 'chatty',
          inputSchema: { type: 'object' },
          handler: (_a, ctx) => {
            ctx.log('error', 'something');
            return textResult('done');
          },
        },
      ],
      { logging: false },
    );
    const meta = { ...META, 'io.modelcontextprotocol/logLevel': 'debug' };
    const r = await send(quiet, post(rpc('tools/call', { name: 'chatty', arguments: {} }, meta)));
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const d = await send(quiet, post(rpc('server/discover')));
    expect(d.body.result.capabilities.logging).toBeUndefined();
  });

  it('maxDepth and rateLimit are checked at creation', () => {
    expect(() => endpointWith([], { maxDepth: 0 })).toThrow(/maxDepth/);
    expect(() => endpointWith([], { rateLimit: { limit: 0, windowMs: 1 } })).toThrow(/limit/);
    expect(() => endpointWith([], { rateLimit: { limit: 1, windowMs: 1.5 } })).toThrow(/windowMs/);
  });

  it('cache hints the wire cannot carry are refused at creation (helper-163 L11)', () => {
    for (const ttl of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, null, '60'])
      for (const name of ['listTtlMs', 'readTtlMs'])
        expect(() => endpointWith([], { [name]: ttl } as never)).toThrow(
          `${name} must be a whole number of milliseconds ≥ 0`,
        );
    for (const cacheScope of ['public-ish', 5, null])
      expect(() => endpointWith([], { cacheScope } as never)).toThrow(/cacheScope must be/);
    expect(() =>
      endpointWith([], { listTtlMs: 0, readTtlMs: 0, cacheScope: 'public' }),
    ).not.toThrow();
  });
});

describe('inspectParams', () => {
  it('finds depth beyond the limit anywhere, inputResponses included', () => {
    const deep = { inputResponses: { k: { action: 'decline', content: { a: [[[[1]]]] } } } };
    expect(inspectParams(deep, 5)).toEqual({
      path: ['inputResponses', 'k', 'content', 'a', '0'],
      problem: 'too-deep',
    });
    expect(inspectParams(deep, 8)).toBeUndefined();
  });

  it('lone surrogates in keys and values, except inside inputResponses; NUL only inside _meta', () => {
    expect(inspectParams({ arguments: { t: 'a\ud800' } })?.problem).toBe('ill-formed-unicode');
    expect(inspectParams({ arguments: { 'k\udfff': 1 } })?.path).toEqual(['arguments', 'k\udfff']);
    expect(inspectParams({ inputResponses: { k: { content: { t: '\ud800' } } } })).toBeUndefined();
    expect(inspectParams({ arguments: { t: 'a\u0000b' } })).toBeUndefined();
    expect(inspectParams({ _meta: { x: ['a\u0000'] } })).toEqual({
      path: ['_meta', 'x', '0'],
      problem: 'nul-in-meta',
    });
    expect(inspectParams({ arguments: { emoji: '😀' } })).toBeUndefined();
    expect(inspectParams(JSON.parse('{"arguments":{"n":[1e400]}}'))).toEqual({
      path: ['arguments', 'n', '0'],
      problem: 'non-finite-number',
    });
    expect(
      inspectParams(JSON.parse('{"inputResponses":{"k":{"content":{"n":1e400}}}}')),
    ).toBeUndefined();
  });
});

describe('RateLimiter (token bucket per principal)', () => {
  it('allows limit calls at once, then tells how long until the next one', () => {
    const limiter = new RateLimiter({ limit: 3, windowMs: 3000 });
    expect([0, 1, 2].map(() => limiter.take('a', 1000))).toEqual([0, 0, 0]);
    expect(limiter.take('a', 1000)).toBe(1000);
    expect(limiter.take('b', 1000)).toBe(0);
    expect(limiter.take('a', 2000)).toBe(0);
    expect(limiter.take('a', 2000)).toBe(1000);
  });

  it('forgets idle principals once many are kept, without losing the limit of active ones', () => {
    const limiter = new RateLimiter({ limit: 1, windowMs: 1000 });
    expect(limiter.take('busy', 0)).toBe(0);
    for (let i = 0; i < 10_050; i++) limiter.take(`p${i}`, 500);
    expect(limiter.take('busy', 600)).toBeGreaterThan(0);
    expect(limiter.take('p0', 5000)).toBe(0);
  });
});
