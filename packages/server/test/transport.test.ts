import { encodeHeaderValue, textResult } from '@mrtr/wire';
import { describe, expect, it } from 'vitest';
import { createMcpEndpoint, DISCARD_LIMIT_BYTES, type McpEndpointOptions } from '../src/index.js';
import { META, post, rpc, send } from './helpers.js';

const echo = {
  name: 'echo',
  description: 'Echoes text.',
  inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } },
  handler: (args: Record<string, unknown>) => textResult(String(args.text ?? '')),
};

function endpointWith(options: Partial<McpEndpointOptions> = {}) {
  return createMcpEndpoint({
    serverInfo: { name: 'test', version: '1.0.0' },
    tools: [echo],
    authenticate: () => ({ id: 'alice' }),
    onError: () => {},
    ...options,
  });
}

describe('body size limit (413 before parsing)', () => {
  const endpoint = endpointWith({ maxBodyBytes: 200 });

  it.each([
    // Within 16 MiB past the limit the body is read and dropped (a client still sending reads the 413).
    ['just past the limit: read and dropped', 201, true],
    ['past the limit and the drain bound: refused unread', 200 + DISCARD_LIMIT_BYTES + 1, false],
  ])('refuses a declared Content-Length %s', async (_, length, read) => {
    let pulled = false;
    const body = new ReadableStream(
      {
        pull(c) {
          pulled = true;
          c.close();
        },
      },
      { highWaterMark: 0 }, // pull only when someone reads
    );
    const req = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(length) },
      body,
      duplex: 'half',
    } as RequestInit);
    const res = await endpoint(req);
    expect(res.status).toBe(413);
    expect(pulled).toBe(read);
  });

  it('refuses a streamed body that grows past the limit, even if it is not JSON', async () => {
    const chunks = ['{"a":"', 'x'.repeat(150), 'y'.repeat(150), '"}'];
    const body = new ReadableStream({
      start(c) {
        for (const s of chunks) c.enqueue(new TextEncoder().encode(s));
        c.close();
      },
    });
    const req = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    const r = await endpoint(req);
    expect(r.status).toBe(413);
    expect((await r.json()).error.code).toBe(-32600);
  });

  it('accepts a body at the limit; the limit is configurable and checked', async () => {
    const call = rpc('tools/call', { name: 'echo', arguments: { text: '' } });
    const size = Buffer.byteLength(JSON.stringify(call));
    const exact = endpointWith({ maxBodyBytes: size });
    expect((await send(exact, post(call))).status).toBe(200);
    const under = endpointWith({ maxBodyBytes: size - 1 });
    expect((await send(under, post(call), false)).status).toBe(413);
    for (const maxBodyBytes of [0, -1, 1.5, Number.NaN])
      expect(() => endpointWith({ maxBodyBytes })).toThrow(/maxBodyBytes/);
  });

  it('answers invalid UTF-8 with -32700', async () => {
    const req = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array([0x7b, 0xff, 0x7d]),
    });
    const res = await endpointWith()(req);
    expect([res.status, (await res.json()).error.code]).toEqual([400, -32700]);
  });

  it('answers invalid UTF-8 with -32700 when the length is declared too', async () => {
    const req = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '3' },
      body: new Uint8Array([0x7b, 0xff, 0x7d]),
    });
    const res = await endpointWith()(req);
    expect([res.status, (await res.json()).error.code]).toEqual([400, -32700]);
  });

  it('refuses a body longer than the limit even when its declared length is within it', async () => {
    const call = rpc('tools/call', { name: 'echo', arguments: { text: 'x'.repeat(300) } });
    const req = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '100' },
      body: JSON.stringify(call),
    });
    const res = await endpoint(req);
    expect([res.status, (await res.json()).error.code]).toEqual([413, -32600]);
  });
});

describe('Host and Origin validation (403, DNS rebinding)', () => {
  const call = () => rpc('tools/call', { name: 'echo', arguments: { text: 'x' } });

  it('allows loopback hosts by default and refuses any other Host', async () => {
    const endpoint = endpointWith();
    for (const url of ['http://localhost:3000/mcp', 'http://127.0.0.1/mcp', 'http://[::1]:9/mcp'])
      expect((await send(endpoint, post(call(), {}, url))).status, url).toBe(200);
    for (const url of [
      'http://evil.example.com/mcp',
      'http://10.0.0.5:3000/mcp',
      'http://localhost.evil.com/mcp',
    ]) {
      const r = await send(endpoint, post(call(), {}, url));
      expect([r.status, r.body.error.code], url).toEqual([403, -32600]);
      expect(r.body.id).toBeUndefined();
    }
  });

  it('prefers the Host header to the URL when the runtime passes it', async () => {
    const endpoint = endpointWith();
    const evil = await send(endpoint, post(call(), { host: 'evil.example.com:3000' }));
    expect(evil.status).toBe(403);
    const local = await send(
      endpoint,
      post(call(), { host: 'localhost:3000' }, 'http://10.1.1.1/mcp'),
    );
    expect(local.status).toBe(200);
  });

  it('allowedHosts accepts hostnames, host:port pairs, or a predicate', async () => {
    const list = endpointWith({ allowedHosts: ['mcp.example.com', 'api.example.com:8443'] });
    expect((await send(list, post(call(), {}, 'https://mcp.example.com/mcp'))).status).toBe(200);
    expect((await send(list, post(call(), {}, 'https://api.example.com:8443/mcp'))).status).toBe(
      200,
    );
    expect((await send(list, post(call(), {}, 'https://api.example.com:9443/mcp'))).status).toBe(
      403,
    );
    expect((await send(list, post(call(), {}, 'http://localhost/mcp'))).status).toBe(403);
    const fn = endpointWith({ allowedHosts: (h) => h.endsWith('.internal') });
    expect((await send(fn, post(call(), {}, 'http://svc.internal/mcp'))).status).toBe(200);
    expect((await send(fn, post(call(), {}, 'http://svc.external/mcp'))).status).toBe(403);
  });

  it('names the Host or Origin it refused and the option that would let it in', async () => {
    const byDefault = await send(endpointWith(), post(call(), {}, 'http://mcp.example.com/mcp'));
    expect(byDefault.body.error.message).toBe(
      'Host not allowed: "mcp.example.com" is not in allowedHosts (default: localhost, 127.0.0.1, [::1]); ' +
        'to accept it, add it to the allowedHosts option of createMcpEndpoint',
    );
    const listed = endpointWith({
      allowedHosts: ['a.example'],
      allowedOrigins: ['https://a.example'],
    });
    const host = await send(listed, post(call(), {}, 'http://b.example:8080/mcp'));
    expect(host.body.error.message).toMatch(
      /^Host not allowed: "b\.example:8080" is not in the endpoint's allowedHosts;/,
    );
    const origin = await send(
      listed,
      post(call(), { origin: 'https://evil.example' }, 'http://a.example/mcp'),
    );
    expect([origin.status, origin.body.error.message]).toEqual([
      403,
      expect.stringMatching(
        /^Origin not allowed: "https:\/\/evil\.example" is not in the endpoint's allowedOrigins; .* allowedOrigins option/,
      ),
    ]);
    // The echo of the client's header is JSON-quoted and bounded.
    const long = await send(
      endpointWith(),
      post(call(), { origin: `https://${'x'.repeat(500)}.example` }),
    );
    expect(long.body.error.message.length).toBeLessThan(400);
  });

  it('refuses a foreign Origin, allows loopback origins and a configured list', async () => {
    const endpoint = endpointWith();
    expect((await send(endpoint, post(call(), { origin: 'http://evil.example.com' }))).status).toBe(
      403,
    );
    expect((await send(endpoint, post(call(), { origin: 'http://127.0.0.1:5173' }))).status).toBe(
      200,
    );
    const listed = endpointWith({ allowedOrigins: ['https://app.example.com'] });
    expect((await send(listed, post(call(), { origin: 'https://app.example.com' }))).status).toBe(
      200,
    );
    expect((await send(listed, post(call(), { origin: 'http://localhost' }))).status).toBe(403);
  });
});

describe('request validation order and codes', () => {
  const endpoint = endpointWith();

  it('requires _meta with protocolVersion and clientCapabilities: -32602 with HTTP 400', async () => {
    const cases: [unknown, string[]][] = [
      [
        undefined,
        ['io.modelcontextprotocol/protocolVersion', 'io.modelcontextprotocol/clientCapabilities'],
      ],
      [
        { 'io.modelcontextprotocol/clientCapabilities': {} },
        ['io.modelcontextprotocol/protocolVersion'],
      ],
      [
        { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
        ['io.modelcontextprotocol/clientCapabilities'],
      ],
    ];
    for (const [meta, missing] of cases) {
      const body = {
        jsonrpc: '2.0',
        id: 9,
        method: 'server/discover',
        params: meta ? { _meta: meta } : {},
      };
      const r = await send(endpoint, post(body), false);
      expect([r.status, r.body.id, r.body.error.code]).toEqual([400, 9, -32602]);
      expect(r.body.error.data).toEqual({ path: 'params._meta', missing });
    }
    const noInfo = await send(endpoint, post(rpc('server/discover', {}, { ...META })));
    expect(noInfo.status).toBe(200);
  });

  it('answers a malformed _meta value with -32602 naming the member', async () => {
    const bad = rpc('server/discover', {}, { ...META, 'io.modelcontextprotocol/logLevel': 'loud' });
    const r = await send(endpoint, post(bad), false);
    expect([r.status, r.body.error.code]).toEqual([400, -32602]);
    expect(r.body.error.message).toMatch(
      /^Invalid params: _meta\.io\.modelcontextprotocol\/logLevel: /,
    );
    // data names the member dotted from params, as every other -32602 of the endpoint does.
    expect(r.body.error.data).toEqual({
      path: 'params._meta.io.modelcontextprotocol/logLevel',
      problem: r.body.error.message.slice(
        'Invalid params: _meta.io.modelcontextprotocol/logLevel: '.length,
      ),
    });
    expect(r.body.error.data.problem).not.toBe('');
    const caps = rpc(
      'server/discover',
      {},
      {
        ...META,
        'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: 5 } },
      },
    );
    const c = await send(endpoint, post(caps), false);
    expect(c.body.error.message).toContain(
      '_meta.io.modelcontextprotocol/clientCapabilities.elicitation.form',
    );
    expect(c.body.error.data.path).toBe(
      'params._meta.io.modelcontextprotocol/clientCapabilities.elicitation.form',
    );
  });

  it('quotes a deep path of long keys bounded, with bidi and other format characters shown as U+FFFD', async () => {
    let caps: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) caps = { [`\u202e${'k'.repeat(60)}${i}`]: caps };
    const body = rpc(
      'server/discover',
      {},
      {
        ...META,
        'io.modelcontextprotocol/clientCapabilities': { experimental: caps },
      },
    );
    const r = await send(endpoint, post(body), false);
    expect([r.status, r.body.error.code]).toEqual([400, -32602]);
    expect(r.body.error.message).not.toContain('\u202e');
    expect(r.body.error.message).toContain('\ufffd');
    expect(r.body.error.message.length).toBeLessThan(400);
    expect(r.text.length).toBeLessThan(1200);
    // An unknown tool's name is quoted the same way.
    const name = '\u202eecho';
    const call = post(rpc('tools/call', { name, arguments: {} }), {
      'mcp-name': encodeHeaderValue(name),
    });
    const tool = await send(endpoint, call, false);
    expect(tool.body.error.message).toBe('Unknown tool: \ufffdecho');
  });

  it('quotes a protocol version, an Origin and a Host a client chose bounded, controls and separators as U+FFFD', async () => {
    const hostile = '\u009b31m\u202e\u001b[2J\u0000\ud800\u2028';
    // Header values arrive as bytes, each a character up to U+00FF: C1 controls, a soft hyphen.
    const inHeader = '\u009b31m\u001b[2J\u0085\u00ad';
    const header = await send(
      endpoint,
      post(rpc('tools/list'), { 'mcp-protocol-version': `${inHeader}${'v'.repeat(16_000)}` }),
      false,
    );
    expect(header.body.error.code).toBe(-32022);
    expect(header.text.length).toBeLessThan(1000);
    const body = await send(
      endpoint,
      post(
        { jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: hostile } },
        { 'mcp-method': 'initialize' },
      ),
      false,
    );
    expect(body.body.error.code).toBe(-32022);
    const origin = await send(
      endpointWith({ allowedOrigins: ['https://a.example'] }),
      post(rpc('tools/list'), { origin: `https://${inHeader}.example` }),
      false,
    );
    expect(origin.status).toBe(403);
    for (const r of [header, body, origin]) {
      const said = `${r.body.error.message} ${JSON.stringify(r.body.error.data ?? null)}`;
      expect(said).not.toMatch(/[\p{Cc}\u00ad\u202e\u2028]/u);
      expect(r.body.error.message.isWellFormed()).toBe(true);
      expect(r.body.error.message).toContain('\ufffd');
    }
    expect(body.body.error.data.requested).toBe('\ufffd31m\ufffd\ufffd[2J\ufffd\ufffd\ufffd');
  });

  it('says what is wrong with an envelope: an id beyond the safe integers, a fraction, no method', async () => {
    const head = { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28' };
    const raw = (text: string) =>
      send(
        endpoint,
        new Request('http://127.0.0.1/mcp', { method: 'POST', headers: head, body: text }),
        false,
      );
    const huge = await raw('{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}');
    expect([huge.status, huge.body.error.code, huge.body.id]).toEqual([400, -32600, undefined]);
    expect(huge.body.error.message).toContain('beyond ±(2^53 − 1)');
    const infinite = await raw('{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}');
    expect(infinite.body.error.message).toContain('beyond ±(2^53 − 1)');
    const fraction = await raw('{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}');
    expect(fraction.body.error.message).toContain('not a fraction');
    const noMethod = await raw('{"jsonrpc":"2.0","id":1}');
    expect(noMethod.body.error.message).toBe('Invalid JSON-RPC request: method must be a string');
    expect(noMethod.body.id).toBe(1);
    for (const params of ['[1]', 'null', '"x"']) {
      const r = await raw(`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":${params}}`);
      expect(r.body.error.message, params).toBe(
        'Invalid JSON-RPC request: params must be an object',
      );
      expect(r.body.id).toBe(4);
    }
  });

  it('refuses a request that also carries result or error (a response, JSON-RPC 2.0 §4): -32600 naming it, id kept', async () => {
    const head = {
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    };
    const raw = (text: string) =>
      send(
        endpoint,
        new Request('http://127.0.0.1/mcp', { method: 'POST', headers: head, body: text }),
        false,
      );
    const list = `"jsonrpc":"2.0","id":1,"method":"tools/list","params":${JSON.stringify(rpc('tools/list').params)}`;
    expect((await raw(`{${list}}`)).status).toBe(200); // the same request without them is served
    for (const [member, value] of [
      ['result', '{}'],
      ['error', '{"code":-32603,"message":"x"}'],
      ['result', 'null'],
    ]) {
      const r = await raw(`{${list},"${member}":${value}}`);
      expect([r.status, r.body.id, r.body.error.code], member).toEqual([400, 1, -32600]);
      expect(r.body.error.message).toBe(
        `Invalid JSON-RPC request: a request has no ${member} member (JSON-RPC 2.0 §4): with one it is a response, which a client does not send`,
      );
    }
    // An id no response can carry is not echoed, as for the other envelope problems.
    const badId = await raw('{"jsonrpc":"2.0","id":1.5,"method":"tools/list","result":{}}');
    expect([badId.body.id, badId.body.error.code]).toEqual([undefined, -32600]);
    expect(badId.body.error.message).toContain('no result member');
  });

  it('answers a tools/call whose name is not a string with -32602, not a header mismatch', async () => {
    const body = rpc('tools/call', { name: 5, arguments: {} });
    const r = await send(endpoint, post(body, { 'mcp-name': '5' }), false);
    expect([r.status, r.body.error.code]).toEqual([400, -32602]);
    expect(r.body.error.message).toBe('Invalid params: params.name must be a string');
  });

  it('answers removed and unknown methods with 404 and -32601, echoing the id', async () => {
    for (const method of ['ping', 'logging/setLevel', 'resources/subscribe', 'nope/x']) {
      const body = rpc(method);
      const r = await send(endpoint, post(body));
      expect([r.status, r.body.id, r.body.error.code], method).toEqual([404, body.id, -32601]);
    }
    // A capability the server lacks has no methods either.
    expect((await send(endpoint, post(rpc('prompts/list')))).status).toBe(404);
  });

  it('UnsupportedProtocolVersion carries requested and supported; a header/body mismatch is -32020', async () => {
    const v = 'v999.0.0';
    const r = await send(
      endpoint,
      post(rpc('server/discover', {}, { ...META, 'io.modelcontextprotocol/protocolVersion': v }), {
        'mcp-protocol-version': v,
      }),
    );
    expect([r.status, r.body.error.code]).toEqual([400, -32022]);
    expect(r.body.error.data).toEqual({ requested: v, supported: ['2026-07-28'] });
    const m = await send(
      endpoint,
      post(rpc('server/discover', {}, { ...META, 'io.modelcontextprotocol/protocolVersion': v })),
      false,
    );
    expect([m.status, m.body.error.code]).toEqual([400, -32020]);
  });

  it('answers a handshake-era initialize with -32022 naming what it asked, or -32601 for a version served here', async () => {
    const legacy = (protocolVersion: unknown) =>
      post(
        { jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion } },
        {
          'mcp-method': 'initialize',
        },
      );
    const old = await send(endpoint, legacy('2025-06-18'), false);
    expect([old.status, old.body.error.code, old.body.error.data.requested]).toEqual([
      400,
      -32022,
      '2025-06-18',
    ]);
    expect(old.body.error.message).toMatch(/^Unsupported protocol version: 2025-06-18\. /);
    // A served version, or none named: -32022 would call it unsupported, or make one up. The
    // method is gone in this revision: -32601, still with 400 and the versions served named.
    const header = (headers: Record<string, string | undefined>) =>
      post(
        { jsonrpc: '2.0', id: 3, method: 'initialize', params: {} },
        {
          'mcp-method': 'initialize',
          ...headers,
        },
      );
    for (const request of [
      legacy('2026-07-28'),
      legacy({ a: '\ud800' }), // the header's version, which is served here
      header({ 'mcp-protocol-version': undefined }),
    ]) {
      const r = await send(endpoint, request, false);
      expect([r.status, r.body.error.code, r.body.error.data]).toEqual([400, -32601, undefined]);
      expect(r.body.error.message).toMatch(
        /^Method not found: initialize\. This server speaks 2026-07-28, which has no initialize handshake: /,
      );
    }
    // Asked by the header alone, for a version not served: that version, whole.
    const other = await send(endpoint, header({ 'mcp-protocol-version': '2025-03-26' }), false);
    expect([other.body.error.code, other.body.error.data.requested]).toEqual([
      -32022,
      '2025-03-26',
    ]);
  });

  it('requires Mcp-Method on every request and rejects a case-changed value', async () => {
    const missing = await send(endpoint, post(rpc('tools/list'), { 'mcp-method': undefined }));
    expect([missing.status, missing.body.error.code]).toEqual([400, -32020]);
    const upper = await send(endpoint, post(rpc('tools/list'), { 'mcp-method': 'TOOLS/LIST' }));
    expect(upper.body.error.code).toBe(-32020);
  });

  it('accepts a notification with 202 and refuses a malformed one with 400', async () => {
    const ok = await endpoint(
      post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} }),
    );
    expect([ok.status, await ok.text()]).toEqual([202, '']);
    const bad = await send(endpoint, post({ jsonrpc: '2.0', method: 7 }), false);
    expect([bad.status, bad.body.error.code]).toEqual([400, -32600]);
    // With a result or an error it is no notification (JSON-RPC 2.0 §4.1), as a request is none.
    for (const extra of [{ result: {} }, { error: { code: -32603, message: 'x' } }]) {
      const both = { jsonrpc: '2.0', method: 'notifications/cancelled', params: {}, ...extra };
      const r = await send(endpoint, post(both), false);
      expect([r.status, r.body.error.code]).toEqual([400, -32600]);
      expect(r.body.error.message).toContain('a notification has no result or error member');
    }
  });

  it('refuses a batch and a JSON-RPC response posted by a client with -32600', async () => {
    const batch = await send(endpoint, post([rpc('tools/list')]), false);
    expect([batch.status, batch.body.error.code]).toEqual([400, -32600]);
    const response = await send(endpoint, post({ jsonrpc: '2.0', id: 4, result: {} }), false);
    expect([response.status, response.body.id, response.body.error.code]).toEqual([400, 4, -32600]);
  });

  it('rejects inputResponses that are not objects of objects, and a non-string requestState (-32602), naming the member', async () => {
    for (const [extra, param, problem] of [
      [{ inputResponses: null }, 'inputResponses', 'must be a JSON object'],
      [{ inputResponses: 'x' }, 'inputResponses', 'must be a JSON object'],
      [{ inputResponses: { k: 12345 } }, 'inputResponses.k', 'must be a JSON object'],
      [
        { inputResponses: { ok: {}, '\u0000': [] } },
        'inputResponses.\ufffd', // a control character is shown as U+FFFD
        'must be a JSON object',
      ],
      [{ inputResponses: { '\ud800x': 1 } }, 'inputResponses.\ufffdx', 'must be a JSON object'],
      [{ requestState: 5 }, 'requestState', 'must be a string'],
      [{ arguments: [1] }, 'arguments', 'must be a JSON object'],
      [{ arguments: null }, 'arguments', 'must be a JSON object'],
    ] as const) {
      const r = await send(endpoint, post(rpc('tools/call', { name: 'echo', ...extra })), false);
      expect(r.body.error, JSON.stringify(extra)).toEqual({
        code: -32602,
        message: `Invalid tools/call params: ${param} ${problem}`,
        data: { path: `params.${param}`, param, problem },
      });
    }
  });

  it('names the member of prompts/get params the schema refused (-32602)', async () => {
    const withPrompt = endpointWith({
      prompts: [{ name: 'p', handler: () => ({ resultType: 'complete' as const, messages: [] }) }],
    });
    for (const [args, param] of [
      [5, 'arguments'],
      [{ who: 5 }, 'arguments.who'],
    ] as const) {
      const r = await send(
        withPrompt,
        post(rpc('prompts/get', { name: 'p', arguments: args })),
        false,
      );
      expect(r.body.error.code).toBe(-32602);
      expect(r.body.error.message).toMatch(
        new RegExp(`^Invalid prompts/get params: ${param} is invalid \\(`),
      );
      expect(r.body.error.data.param).toBe(param);
      expect(r.body.error.data.path).toBe(`params.${param}`);
    }
  });

  it('names an unknown cursor in data.path (-32602), as the other params problems', async () => {
    const r = await send(endpoint, post(rpc('tools/list', { cursor: 'page-2' })), false);
    expect(r.body.error).toEqual({
      code: -32602,
      message: 'Invalid params: unknown cursor',
      data: { path: 'params.cursor' },
    });
  });
});

describe('Mcp-Param headers', () => {
  const tool = {
    name: 'regional',
    description: 'Runs in a region.',
    inputSchema: {
      type: 'object' as const,
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        shard: { type: 'integer', 'x-mcp-header': 'Shard' },
        dry: { type: 'boolean', 'x-mcp-header': 'Dry' },
        q: { type: 'string' },
      },
    },
    handler: () => textResult('ok'),
  };
  const endpoint = endpointWith({ tools: [tool] });
  const call = (args: Record<string, unknown>) =>
    rpc('tools/call', { name: 'regional', arguments: args });

  it.each<[string, Record<string, unknown>, Record<string, string>, number]>([
    [
      'matching headers',
      { region: 'us-west1', shard: 42, dry: true },
      { 'mcp-param-region': 'us-west1', 'mcp-param-shard': '42', 'mcp-param-dry': 'true' },
      200,
    ],
    ['integer compared numerically', { shard: 42 }, { 'mcp-param-shard': '42.0' }, 200],
    [
      'Base64 value',
      { region: 'Hello, 世界' },
      { 'mcp-param-region': '=?base64?SGVsbG8sIOS4lueVjA==?=' },
      200,
    ],
    ['absent argument needs no header', { q: 'x' }, {}, 200],
    ['missing header', { region: 'us-west1' }, {}, 400],
    ['mismatching header', { region: 'us-west1' }, { 'mcp-param-region': 'eu-west1' }, 400],
    ['wrong boolean', { dry: false }, { 'mcp-param-dry': 'true' }, 400],
    [
      'invalid Base64 even without the argument',
      { q: 'x' },
      { 'mcp-param-region': '=?base64?SGVsbG8?=' },
      400,
    ],
  ])('%s → %i', async (_label, args, headers, status) => {
    const r = await send(endpoint, post(call(args), headers));
    expect(r.status).toBe(status);
    if (status === 400) expect(r.body.error.code).toBe(-32020);
  });

  it('refuses an invalid x-mcp-header annotation at creation', () => {
    const bad = (properties: Record<string, unknown>) => () =>
      endpointWith({ tools: [{ ...tool, inputSchema: { type: 'object', properties } }] });
    expect(bad({ a: { type: 'number', 'x-mcp-header': 'A' } })).toThrow(
      /string, integer or boolean/,
    );
    expect(bad({ a: { type: 'string', 'x-mcp-header': 'Bad Name' } })).toThrow(/token/);
    expect(
      bad({
        a: { type: 'string', 'x-mcp-header': 'X' },
        b: { type: 'string', 'x-mcp-header': 'x' },
      }),
    ).toThrow(/repeats/);
    expect(bad({ a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'I' } } })).toThrow(
      /reachable/,
    );
  });
});
