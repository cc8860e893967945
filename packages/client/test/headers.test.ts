import { describe, expect, it } from 'vitest';
import { McpClient, paramHeaders } from '../src/index.js';
import { done, serveScripted } from './helpers.js';

const serve = serveScripted();

const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('Mcp-Param headers of a tools/call', () => {
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

describe('timer options', () => {
  it('refuses answerTimeoutMs and requestTimeoutMs Node cannot wait, at construction and per call', async () => {
    const url = 'http://127.0.0.1:9/mcp';
    // Past 2^31 − 1 ms a timer fires at once: every question would count as unanswered.
    for (const bad of [0, -1, Number.NaN, 2 ** 31, Infinity]) {
      expect(() => new McpClient({ url, answerTimeoutMs: bad })).toThrow(RangeError);
      expect(() => new McpClient({ url, requestTimeoutMs: bad })).toThrow(RangeError);
    }
    const client = new McpClient({ url, answerTimeoutMs: 2 ** 31 - 1 });
    await expect(client.callTool('x', {}, { answerTimeoutMs: 2 ** 31 })).rejects.toThrow(
      RangeError,
    );
  });
});
