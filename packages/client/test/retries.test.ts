/**
 * The one-time retries (after -32022 and, for tools/call, after -32020) and
 * the methods that may not ask for input.
 */
import { describe, expect, it } from 'vitest';
import { type ClientEvent, JsonRpcError, McpClient, ProtocolError } from '../src/index.js';
import {
  confirmSchema,
  done,
  formRequest,
  type Reply,
  scriptedAnswerer,
  serveScripted,
} from './helpers.js';

const serve = serveScripted();

const unsupported = (supported: unknown): Reply => ({
  status: 400,
  error: {
    code: -32022,
    message: 'Unsupported protocol version',
    data: { supported, requested: '2026-07-28' },
  },
});
const mismatch: Reply = {
  status: 400,
  error: { code: -32020, message: 'Header mismatch: Mcp-Param-Region is missing' },
};
const versionOf = (r: { headers: Record<string, unknown>; body: any }) => ({
  header: r.headers['mcp-protocol-version'],
  meta: r.body.params._meta['io.modelcontextprotocol/protocolVersion'],
});

describe('-32022 UnsupportedProtocolVersion (basic/versioning)', () => {
  it('sends the request once more with a version from data.supported that it speaks', async () => {
    const s = await serve((_b, n) =>
      n === 0 ? unsupported(['2025-11-25', '2026-07-28']) : { result: { resultType: 'complete' } },
    );
    const events: ClientEvent[] = [];
    await new McpClient({ url: s.url, onEvent: (e) => events.push(e) }).discover();
    expect(s.requests.map((r) => r.body.method)).toEqual(['server/discover', 'server/discover']);
    expect(s.requests[0]?.body.id).not.toBe(s.requests[1]?.body.id);
    expect(versionOf(s.requests[1] as any)).toEqual({ header: '2026-07-28', meta: '2026-07-28' });
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'retried',
        method: 'server/discover',
        reason: 'unsupported-version',
      }),
    );
  });

  it('retries a round of tools/call the same way, and the call completes', async () => {
    const s = await serve((_b, n) => (n === 0 ? unsupported(['2026-07-28']) : done('ok')));
    const out = await new McpClient({ url: s.url }).callTool('t', { a: 1 });
    expect(out.result.content[0]?.text).toBe('ok');
    expect(s.requests[1]?.body.params.arguments).toEqual({ a: 1 });
  });

  it('surfaces the error when no listed version is one it speaks, or the data is malformed', async () => {
    for (const supported of [['2025-11-25'], [], 'nope', undefined]) {
      const s = await serve(() => unsupported(supported));
      const error = await new McpClient({ url: s.url }).discover().catch((e) => e);
      expect(error, String(supported)).toBeInstanceOf(JsonRpcError);
      expect(error.rpcCode).toBe(-32022);
      expect(s.requests).toHaveLength(1);
    }
  });

  it('retries only once', async () => {
    const s = await serve(() => unsupported(['2026-07-28']));
    const error = await new McpClient({ url: s.url }).callTool('t').catch((e) => e);
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(s.requests).toHaveLength(2);
  });
});

/** A tools/list result: tool `t`, with `region` mirrored into Mcp-Param-Region when `annotated`. */
const toolList = (annotated: boolean, name = 't'): Reply => ({
  result: {
    tools: [
      {
        name,
        inputSchema: {
          type: 'object',
          properties: {
            region: { type: 'string', ...(annotated ? { 'x-mcp-header': 'Region' } : {}) },
          },
        },
      },
    ],
  },
});

describe('-32020 HeaderMismatch on tools/call (streamable-http, "Client Behavior")', () => {
  it('re-lists the tools and sends the call again with the headers of the fresh definition', async () => {
    let listed = 0;
    const s = await serve((b) => {
      if (b.method === 'tools/list') return toolList(++listed > 1);
      return b.params.arguments.region === 'eu' &&
        !('mcp-param-region' in (s?.requests.at(-1)?.headers ?? {}))
        ? mismatch
        : done('called');
    });
    const events: ClientEvent[] = [];
    const client = new McpClient({ url: s.url, onEvent: (e) => events.push(e) });
    await client.listTools();
    const out = await client.callTool('t', { region: 'eu' });
    expect(out.result.content[0]?.text).toBe('called');
    expect(s.requests.map((r) => r.body.method)).toEqual([
      'tools/list',
      'tools/call',
      'tools/list',
      'tools/call',
    ]);
    expect(s.requests[1]?.headers['mcp-param-region']).toBeUndefined();
    expect(s.requests[3]?.headers['mcp-param-region']).toBe('eu');
    expect(s.requests[3]?.body.id).not.toBe(s.requests[1]?.body.id);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'retried', method: 'tools/call', reason: 'header-mismatch' }),
    );
  });

  it('resends an answered round as it was: the answer is not asked for again', async () => {
    let listed = 0;
    const s = await serve((b) => {
      if (b.method === 'tools/list') return toolList(++listed > 0);
      const headed = 'mcp-param-region' in (s?.requests.at(-1)?.headers ?? {});
      if (!b.params.inputResponses)
        return {
          result: {
            resultType: 'input_required',
            inputRequests: { q: formRequest(confirmSchema) },
            requestState: 'st',
          },
        };
      return headed ? done('confirmed') : mismatch;
    });
    const { answerer, questions } = scriptedAnswerer([
      { action: 'accept', content: { confirm: true } },
    ]);
    // The caller's stale definition has no annotation; the server's has one.
    const stale = {
      name: 't',
      inputSchema: { type: 'object', properties: { region: { type: 'string' } } },
    };
    const out = await new McpClient({ url: s.url, answerer }).callTool(
      't',
      { region: 'eu' },
      { tool: stale },
    );
    expect(out.result.content[0]?.text).toBe('confirmed');
    expect(questions).toHaveLength(1);
    const calls = s.requests.filter((r) => r.body.method === 'tools/call');
    expect(calls).toHaveLength(3);
    expect(calls[2]?.body.params.inputResponses).toEqual(calls[1]?.body.params.inputResponses);
    expect(calls[2]?.body.params.requestState).toBe('st');
  });

  it('throws when the fresh definition calls for the same headers, the tool is gone, or it happens twice', async () => {
    for (const listing of [toolList(false), toolList(false, 'other')]) {
      const s = await serve((b) => (b.method === 'tools/list' ? listing : mismatch));
      const error = await new McpClient({ url: s.url })
        .callTool('t', { region: 'eu' })
        .catch((e) => e);
      expect(error).toBeInstanceOf(JsonRpcError);
      expect(error.rpcCode).toBe(-32020);
      expect(s.requests.map((r) => r.body.method)).toEqual(['tools/call', 'tools/list']);
    }
    let listed = 0;
    const s = await serve((b) =>
      b.method === 'tools/list' ? toolList(++listed % 2 === 1) : mismatch,
    );
    const error = await new McpClient({ url: s.url })
      .callTool('t', { region: 'eu' })
      .catch((e) => e);
    expect(error.rpcCode).toBe(-32020);
    expect(s.requests.map((r) => r.body.method)).toEqual([
      'tools/call',
      'tools/list',
      'tools/call',
    ]);
  });

  it('does not re-list for prompts/get or resources/read', async () => {
    const s = await serve(() => mismatch);
    const client = new McpClient({ url: s.url });
    await expect(client.getPrompt('p')).rejects.toBeInstanceOf(JsonRpcError);
    await expect(client.readResource('notes://x')).rejects.toBeInstanceOf(JsonRpcError);
    expect(s.requests.map((r) => r.body.method)).toEqual(['prompts/get', 'resources/read']);
  });
});

describe('an InputRequiredResult where none may come (basic/patterns/mrtr, "Supported Requests")', () => {
  const asking = {
    result: {
      resultType: 'input_required',
      inputRequests: { q: formRequest(confirmSchema) },
      requestState: 's',
      tools: [],
    },
  };

  it('is a ProtocolError for server/discover, tools/list and any other method, and nobody is asked', async () => {
    const s = await serve(() => asking);
    const { answerer, questions } = scriptedAnswerer([]);
    const client = new McpClient({ url: s.url, answerer });
    await expect(client.discover()).rejects.toBeInstanceOf(ProtocolError);
    await expect(client.listTools()).rejects.toThrow(/tools\/list with an InputRequiredResult/);
    await expect(client.request('prompts/list', {})).rejects.toBeInstanceOf(ProtocolError);
    expect(questions).toEqual([]);
    expect(s.requests).toHaveLength(3);
  });

  it('is still read as a request for input on tools/call, prompts/get and resources/read', async () => {
    const s = await serve((_b, n) => (n % 2 === 0 ? asking : done()));
    const { answerer } = scriptedAnswerer(Array(3).fill({ action: 'decline' }));
    const client = new McpClient({ url: s.url, answerer });
    for (const out of [
      await client.callTool('t'),
      await client.getPrompt('p'),
      await client.readResource('notes://x'),
    ])
      expect(out.rounds).toBe(2);
  });
});

describe('request()', () => {
  it('sends no answer: inputResponses and requestState are refused before anything is sent', async () => {
    const s = await serve(() => done());
    const client = new McpClient({ url: s.url });
    const accept = { q: { action: 'accept', content: { confirm: true } } };
    await expect(
      client.request('tools/call', { name: 't', inputResponses: accept }),
    ).rejects.toThrow(TypeError);
    await expect(client.request('tools/call', { name: 't', requestState: 's' })).rejects.toThrow(
      /requestState/,
    );
    expect(s.requests).toHaveLength(0);
  });
});
