import { describe, expect, it } from 'vitest';
import {
  JsonRpcError,
  MAX_ERROR_MESSAGE_LENGTH,
  McpClient,
  ProtocolError,
  RoundLimitError,
  TransportError,
} from '../src/index.js';
import { confirmSchema, done, formRequest, scriptedAnswerer, serveScripted } from './helpers.js';

const serve = serveScripted();

const strip = ({ inputResponses: _r, requestState: _s, ...rest }: Record<string, unknown>) => rest;

describe('the MRTR loop (basic/patterns/mrtr, client requirements)', () => {
  it('retries an empty inputRequests with its requestState at once, asking nobody', async () => {
    const s = await serve((body, n) =>
      n === 0
        ? { result: { resultType: 'input_required', inputRequests: {}, requestState: 'wait-1' } }
        : done(`saw ${body.params.requestState}`),
    );
    const { answerer, questions } = scriptedAnswerer([]);
    const client = new McpClient({ url: s.url, answerer });
    const out = await client.callTool('slow', { a: 1 });
    expect(out.result.content[0]?.text).toBe('saw wait-1');
    expect(out.rounds).toBe(2);
    expect(questions).toHaveLength(0);
    const retry = s.requests[1]?.body.params;
    expect(retry.requestState).toBe('wait-1');
    // Keyed exactly as inputRequests: none asked, none answered.
    expect(retry.inputResponses).toEqual({});
  });

  it('retries a requestState-only InputRequiredResult without inputResponses', async () => {
    const s = await serve((_b, n) =>
      n === 0 ? { result: { resultType: 'input_required', requestState: 'poll' } } : done(),
    );
    await new McpClient({ url: s.url }).callTool('t');
    expect(s.requests[1]?.body.params.requestState).toBe('poll');
    expect(s.requests[1]?.body.params).not.toHaveProperty('inputResponses');
  });

  it('treats a result without resultType as complete', async () => {
    const s = await serve(() => ({ result: { content: [{ type: 'text', text: 'legacy' }] } }));
    const { answerer, questions } = scriptedAnswerer([]);
    const out = await new McpClient({ url: s.url, answerer }).callTool('t');
    expect(out.result.content[0]?.text).toBe('legacy');
    expect(out.rounds).toBe(1);
    expect(questions).toHaveLength(0);
  });

  it('sends every retry with a new JSON-RPC id and the same params, echoing requestState exactly', async () => {
    // Escapes, a lone surrogate, spaces and quotes: the echo must be the same string value.
    const odd = ' v1.k1.\u2028"quoted"\\\\/é😀\ud800 ';
    const s = await serve((_b, n) =>
      n < 2
        ? {
            result: {
              resultType: 'input_required',
              inputRequests: { [`q${n}`]: formRequest(confirmSchema) },
              requestState: `${odd}${n}`,
            },
          }
        : done(),
    );
    const { answerer } = scriptedAnswerer([
      { action: 'accept', content: { confirm: true } },
      { action: 'decline' },
    ]);
    await new McpClient({ url: s.url, answerer }).callTool('t', { x: [1, { y: 'z' }] });
    const bodies = s.requests.map((r) => r.body);
    expect(new Set(bodies.map((b) => b.id)).size).toBe(3);
    expect(strip(bodies[1].params)).toEqual(strip(bodies[0].params));
    expect(strip(bodies[2].params)).toEqual(strip(bodies[0].params));
    expect('requestState' in bodies[0].params).toBe(false);
    expect('inputResponses' in bodies[0].params).toBe(false);
    expect(bodies[1].params.requestState).toBe(`${odd}0`);
    expect(bodies[2].params.requestState).toBe(`${odd}1`);
    expect(Object.keys(bodies[1].params.inputResponses)).toEqual(['q0']);
    expect(bodies[2].params.inputResponses).toEqual({ q1: { action: 'decline' } });
  });

  it('omits requestState in a retry when the latest InputRequiredResult had none', async () => {
    const s = await serve((_b, n) => {
      if (n === 0)
        return {
          result: {
            resultType: 'input_required',
            inputRequests: { a: formRequest(confirmSchema) },
            requestState: 'first',
          },
        };
      if (n === 1)
        return {
          result: {
            resultType: 'input_required',
            inputRequests: { b: formRequest(confirmSchema) },
          },
        };
      return done();
    });
    const { answerer } = scriptedAnswerer([
      { action: 'accept', content: { confirm: true } },
      { action: 'accept', content: { confirm: false } },
    ]);
    await new McpClient({ url: s.url, answerer }).callTool('t');
    expect(s.requests[1]?.body.params.requestState).toBe('first');
    expect(s.requests[2]?.body.params).not.toHaveProperty('requestState');
    // Only the latest round's answers travel: earlier ones live in requestState, if anywhere.
    expect(s.requests[2]?.body.params.inputResponses).toEqual({
      b: { action: 'accept', content: { confirm: false } },
    });
  });

  it('keys inputResponses exactly as inputRequests, own keys such as "__proto__" included', async () => {
    const keys = ['__proto__', 'constructor', 'a b', 'ü'];
    const s = await serve((_b, n) =>
      n === 0
        ? {
            result: {
              resultType: 'input_required',
              inputRequests: Object.fromEntries(keys.map((k) => [k, formRequest(confirmSchema)])),
            },
          }
        : done(),
    );
    const { answerer } = scriptedAnswerer(keys.map(() => ({ action: 'cancel' as const })));
    await new McpClient({ url: s.url, answerer }).callTool('t');
    const sent = JSON.parse(s.requests[1]?.raw ?? '{}').params.inputResponses;
    expect(Object.keys(sent)).toEqual(keys);
  });

  it('gives up after maxRounds, but only after reading the last round', async () => {
    const ask = {
      result: {
        resultType: 'input_required',
        inputRequests: { q: formRequest(confirmSchema) },
        requestState: 's',
      },
    };
    const always = await serve(() => ask);
    const yes = () => ({ action: 'accept' as const, content: { confirm: true } });
    const a1 = scriptedAnswerer([yes(), yes(), yes()]);
    const error = await new McpClient({ url: always.url, answerer: a1.answerer, maxRounds: 3 })
      .callTool('t')
      .catch((e) => e);
    expect(error).toBeInstanceOf(RoundLimitError);
    expect(error.rounds).toBe(3);
    expect(always.requests).toHaveLength(3);
    expect(a1.questions).toHaveLength(2); // the third round's question is not put to anyone

    const lastCompletes = await serve((_b, n) => (n < 2 ? ask : done('made it')));
    const a2 = scriptedAnswerer([yes(), yes()]);
    const out = await new McpClient({
      url: lastCompletes.url,
      answerer: a2.answerer,
      maxRounds: 3,
    }).callTool('t');
    expect(out.result.content[0]?.text).toBe('made it');
    expect(out.rounds).toBe(3);
  });

  it('rejects an InputRequiredResult with neither inputRequests nor requestState, and unknown resultTypes', async () => {
    const empty = await serve(() => ({ result: { resultType: 'input_required' } }));
    await expect(new McpClient({ url: empty.url }).callTool('t')).rejects.toBeInstanceOf(
      ProtocolError,
    );
    expect(empty.requests).toHaveLength(1);
    const odd = await serve(() => ({ result: { resultType: 'partial', content: [] } }));
    await expect(new McpClient({ url: odd.url }).callTool('t')).rejects.toThrow(
      /Unknown resultType/,
    );
  });

  it('refuses sampling and roots requests it never declared, before asking anyone', async () => {
    const s = await serve(() => ({
      result: {
        resultType: 'input_required',
        inputRequests: {
          a: formRequest(confirmSchema),
          b: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
        },
      },
    }));
    const { answerer, questions } = scriptedAnswerer([
      { action: 'accept', content: { confirm: true } },
    ]);
    await expect(new McpClient({ url: s.url, answerer }).callTool('t')).rejects.toThrow(
      'inputRequests["b"] is "sampling/createMessage", which this client did not declare',
    );
    expect(questions).toHaveLength(0);
    expect(s.requests).toHaveLength(1);
  });
});

describe('Streamable HTTP', () => {
  it('sends the protocol headers and _meta on every request', async () => {
    const s = await serve(() => done());
    const client = new McpClient({
      url: s.url,
      headers: { Authorization: 'Bearer t', 'Mcp-Method': 'forged' },
      clientInfo: { name: 'test-client', version: '9.9.9' },
      answerer: scriptedAnswerer([]).answerer,
    });
    await client.callTool('notes_delete', {});
    await client.callTool('héllo wörld', {});
    await client.callTool('=?base64?aGk=?=', {});
    await client.callTool(' padded', {});
    await client.readResource('file:///a b/ü.txt');
    const [plain, unicode, sentinel, padded, resource] = s.requests;
    expect(plain?.headers['mcp-protocol-version']).toBe('2026-07-28');
    expect(plain?.headers['mcp-method']).toBe('tools/call');
    expect(plain?.headers['mcp-name']).toBe('notes_delete');
    expect(plain?.headers.authorization).toBe('Bearer t');
    expect(plain?.headers.accept).toContain('application/json');
    expect(plain?.headers.accept).toContain('text/event-stream');
    expect(plain?.headers['content-type']).toBe('application/json');
    const decode = (h: unknown) =>
      Buffer.from(String(h).replace(/^=\?base64\?|\?=$/g, ''), 'base64').toString('utf8');
    expect(unicode?.headers['mcp-name']).toMatch(/^=\?base64\?.*\?=$/);
    expect(decode(unicode?.headers['mcp-name'])).toBe('héllo wörld');
    expect(decode(sentinel?.headers['mcp-name'])).toBe('=?base64?aGk=?=');
    expect(decode(padded?.headers['mcp-name'])).toBe(' padded');
    expect(resource?.headers['mcp-method']).toBe('resources/read');
    expect(decode(resource?.headers['mcp-name'])).toBe('file:///a b/ü.txt');
    expect(plain?.body.params._meta).toEqual({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'test-client', version: '9.9.9' },
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    });
  });

  it('declares per request only what the answerer can show', async () => {
    const s = await serve(() => done());
    const client = new McpClient({ url: s.url });
    await client.callTool('t');
    const urls = { answers: [], opened: [] };
    await client.callTool('t', {}, { answerer: scriptedAnswerer([], urls).answerer });
    await client.callTool(
      't',
      {},
      { answerer: { url: { ask: async () => ({ action: 'decline' }), open() {} } } },
    );
    const caps = s.requests.map(
      (r) => r.body.params._meta['io.modelcontextprotocol/clientCapabilities'],
    );
    expect(caps).toEqual([
      {},
      { elicitation: { form: {}, url: {} } },
      { elicitation: { url: {} } },
    ]);
  });

  it('reads an SSE response: notifications first, events split across writes, then the result', async () => {
    const s = await serve((body) => {
      const progress = JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progress: 1 },
      });
      const response = JSON.stringify({
        jsonrpc: '2.0',
        id: body.id,
        result: { resultType: 'complete', content: [{ type: 'text', text: 'streamed' }] },
      });
      return {
        sse: [
          ': keep-alive\n\n',
          `data: ${progress}\n\n`,
          `data: ${response.slice(0, 20)}`,
          `${response.slice(20)}\n\n`,
        ],
      };
    });
    const events: unknown[] = [];
    const out = await new McpClient({ url: s.url, onEvent: (e) => events.push(e) }).callTool('t');
    expect(out.result.content[0]?.text).toBe('streamed');
    expect(events).toContainEqual({
      type: 'notification',
      notification: { method: 'notifications/progress', params: { progress: 1 } },
    });
  });

  it('fails when an SSE stream ends without the response, or answers another id', async () => {
    const cut = await serve(() => ({
      sse: ['data: {"jsonrpc":"2.0","method":"notifications/message"}\n\n'],
    }));
    await expect(new McpClient({ url: cut.url }).callTool('t')).rejects.toBeInstanceOf(
      TransportError,
    );
    const other = await serve(() => ({
      sse: ['data: {"jsonrpc":"2.0","id":999,"result":{"content":[]}}\n\n'],
    }));
    await expect(new McpClient({ url: other.url }).callTool('t')).rejects.toBeInstanceOf(
      ProtocolError,
    );
  });

  it('turns JSON-RPC errors into JsonRpcError with code, data and HTTP status', async () => {
    const s = await serve(() => ({
      error: {
        code: -32021,
        message: 'needs form',
        data: { requiredCapabilities: { elicitation: { form: {} } } },
      },
      status: 400,
    }));
    const error = await new McpClient({ url: s.url }).callTool('t').catch((e) => e);
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error.rpcCode).toBe(-32021);
    expect(error.httpStatus).toBe(400);
    expect(error.data).toEqual({ requiredCapabilities: { elicitation: { form: {} } } });
  });

  // helper-153 #3: the message was the server's raw text, escapes and all, for a program to log.
  it("escapes and bounds the server's message in JsonRpcError.message, keeping it raw in serverMessage", async () => {
    const raw = `Denied\u001b]52;c;ZWNobyBldmls\u0007\u001b[2J\u202e\ud800 "x" \\ ${'y'.repeat(3000)}`;
    const s = await serve(() => ({ error: { code: -32603, message: raw }, status: 500 }));
    const error = await new McpClient({ url: s.url }).callTool('t').catch((e) => e);
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error.serverMessage).toBe(raw);
    expect(
      error.message.startsWith(
        'Denied\\u001b]52;c;ZWNobyBldmls\\u0007\\u001b[2J\\u202e\\ud800 "x" \\ y',
      ),
    ).toBe(true);
    expect(error.message).not.toMatch(/[\p{Cc}\p{Cf}\p{Cs}]/u);
    expect(error.message).toHaveLength(MAX_ERROR_MESSAGE_LENGTH + 1 + 5 * 5);
  });

  it('reports HTTP failures without a JSON-RPC body, and unknown content types, as TransportError', async () => {
    const bad = await serve(() => ({
      status: 502,
      text: '<html>bad gateway</html>',
      contentType: 'text/html',
    }));
    const e1 = await new McpClient({ url: bad.url }).callTool('t').catch((e) => e);
    expect(e1).toBeInstanceOf(TransportError);
    expect(e1.httpStatus).toBe(502);
    const xml = await serve(() => ({ status: 200, text: '<ok/>', contentType: 'application/xml' }));
    await expect(new McpClient({ url: xml.url }).callTool('t')).rejects.toThrow(
      /expected application\/json/,
    );
    await expect(
      new McpClient({ url: 'http://127.0.0.1:9/mcp' }).callTool('t'),
    ).rejects.toBeInstanceOf(TransportError);
  });

  it('quotes what a server named (an input key, a method, an event stream field) escaped and bounded', async () => {
    const hostile = `\u001b]0;owned\u0007\u202e${'x'.repeat(100_000)}`;
    const keyed = await serve(() => ({
      result: {
        resultType: 'input_required',
        inputRequests: { [hostile]: { method: hostile, params: {} } },
      },
    }));
    const stream = await serve(() => ({ sse: [`retry: ${hostile}\n\n`] }));
    for (const url of [keyed.url, stream.url]) {
      const error = await new McpClient({ url }).callTool('t').catch((e) => e);
      expect(error.message.length).toBeLessThan(600);
      expect(error.message).not.toMatch(/\p{Cc}|\p{Cf}/u);
    }
  });

  it('says what is wrong with a JSON body that is not JSON-RPC, and quotes a server text only as shownText shows it', async () => {
    const reasons: string[] = [];
    for (const [status, text] of [
      [200, '{"jsonrpc":"2.0",'],
      [200, '[{"jsonrpc":"2.0","id":1,"result":{}}]'],
      [500, 'boom\u001b]0;owned\u0007\u001b[2J\u202egnp.exe'],
    ] as const) {
      const s = await serve(() => ({ status, text, contentType: 'application/json' }));
      const error = await new McpClient({ url: s.url }).callTool('t').catch((e) => e);
      expect(error).toBeInstanceOf(TransportError);
      reasons.push(error.message);
    }
    expect(reasons).toEqual([
      'HTTP 200: the body is not valid JSON: {"jsonrpc":"2.0",',
      'HTTP 200: the JSON body is not a JSON-RPC response object',
      'HTTP 500: boom\ufffd]0;owned\ufffd\ufffd[2J\ufffdgnp.exe',
    ]);
  });

  it('stops at once when the caller aborts, sending nothing more', async () => {
    const s = await serve(() => ({
      result: { resultType: 'input_required', inputRequests: { q: formRequest(confirmSchema) } },
    }));
    const controller = new AbortController();
    const { answerer } = scriptedAnswerer([
      async (q) => {
        controller.abort();
        await new Promise((r) => q.signal.addEventListener('abort', r));
        return { action: 'accept', content: { confirm: true } };
      },
    ]);
    const error = await new McpClient({ url: s.url, answerer })
      .callTool('t', {}, { signal: controller.signal })
      .catch((e) => e);
    expect(error.code).toBe('aborted');
    expect(s.requests).toHaveLength(1);
  });
});
