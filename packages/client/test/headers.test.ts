import { afterEach, describe, expect, it } from 'vitest';
import { encodeHeaderValue, McpClient, paramHeaders, readHeaderAnnotations } from '../src/index.js';
import { done, type Reply, scriptedServer } from './helpers.js';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function serve(script: (body: any, n: number) => Reply) {
  const s = await scriptedServer(script);
  servers.push(s);
  return s;
}

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
        { name: 'Region', path: ['region'] },
        { name: 'Dry-Run', path: ['opts', 'dry'] },
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
  ])('rejects %s', (_label, inputSchema, reason) => {
    const r = readHeaderAnnotations(inputSchema);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
  });

  it('converts and encodes values, and omits absent and null ones', () => {
    const annotations = [
      { name: 'S', path: ['s'] },
      { name: 'I', path: ['i'] },
      { name: 'B', path: ['o', 'b'] },
      { name: 'N', path: ['n'] },
      { name: 'Gone', path: ['gone'] },
    ];
    expect(paramHeaders(annotations, { s: 'Zürich', i: -7, o: { b: false }, n: null })).toEqual({
      'Mcp-Param-S': '=?base64?WsO8cmljaA==?=',
      'Mcp-Param-I': '-7',
      'Mcp-Param-B': 'false',
    });
  });

  it('leaves invalid tools out of listTools and mirrors annotated arguments on tools/call', async () => {
    const tools = [
      {
        name: 'execute_sql',
        inputSchema: schema({
          region: { type: 'string', 'x-mcp-header': 'Region' },
          query: { type: 'string' },
        }),
      },
      { name: 'broken', inputSchema: schema({ a: { type: 'number', 'x-mcp-header': 'A' } }) },
      { name: 'no_schema' },
    ];
    const s = await serve((body) =>
      body.method === 'tools/list'
        ? { result: { resultType: 'complete', tools, ttlMs: 0, cacheScope: 'private' } }
        : done(),
    );
    const client = new McpClient({ url: s.url });
    const list = await client.listTools();
    expect(list.tools.map((t) => t.name)).toEqual(['execute_sql']);
    expect(list.rejected.map((r) => r.name)).toEqual(['broken', 'no_schema']);
    await client.callTool('execute_sql', { region: 'us-west1', query: 'SELECT 1' });
    expect(s.requests[1]?.headers['mcp-param-region']).toBe('us-west1');
    expect(s.requests[1]?.headers['mcp-method']).toBe('tools/call');
  });

  it('follows nextCursor through every page of tools/list', async () => {
    const s = await serve((body) => {
      const cursor = body.params.cursor;
      const page = cursor === undefined ? 0 : Number(cursor);
      return {
        result: {
          resultType: 'complete',
          tools: [{ name: `t${page}`, inputSchema: { type: 'object' } }],
          ...(page < 2 ? { nextCursor: String(page + 1) } : {}),
          ttlMs: 0,
          cacheScope: 'private',
        },
      };
    });
    const list = await new McpClient({ url: s.url }).listTools();
    expect(list.tools.map((t) => t.name)).toEqual(['t0', 't1', 't2']);
    expect(s.requests.map((r) => r.body.params.cursor)).toEqual([undefined, '1', '2']);
  });
});
