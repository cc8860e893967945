/**
 * @mrtr/server/adapter-contract-tests: the vitest suite every adapter that
 * mounts an `@mrtr/server` endpoint must pass, over real HTTP: responses
 * stream (the first SSE event arrives before the tool finishes), a client
 * that goes away aborts the handler's `signal`, malformed, huge and deep
 * bodies, NUL and lone surrogates, thrown errors and requests Node's parser
 * refuses all get JSON-RPC bodies (never HTTP 500 with another body), and the
 * endpoint's own rules (arguments, rate limit, versions, pagination,
 * structured content) hold through the adapter. Run it once per way of
 * mounting: e.g. Express with and without `express.json()` in front.
 *
 * Needs `vitest` (a peer dependency) and Node's `fetch`.
 *
 * @example
 * ```ts
 * import type { McpEndpoint } from '@mrtr/server';
 * import { describeAdapterContract, type ServedEndpoint } from '@mrtr/server/adapter-contract-tests';
 * declare function serveWithMyAdapter(endpoint: McpEndpoint): Promise<ServedEndpoint>; // yours
 * describeAdapterContract('node', { serve: (endpoint) => serveWithMyAdapter(endpoint) });
 * ```
 * @packageDocumentation
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { internal, refused } from './contract/expect.js';
import { contractEndpoint, Probe } from './contract/fixture.js';
import { firstChunk, headersFor, META, open, post, rawRequest, rpc } from './contract/http.js';
import type { McpEndpoint } from './types.js';

export { CONTRACT_TOKEN } from './contract/fixture.js';

/** A server {@link describeAdapterContract} started; `url` is the MCP endpoint. */
export interface ServedEndpoint {
  url: string;
  close(): Promise<void>;
}

/** How the suite mounts an endpoint with the adapter under test. */
export interface AdapterContractOptions {
  /** Serve `endpoint` over HTTP on a free loopback port. */
  serve(endpoint: McpEndpoint): Promise<ServedEndpoint>;
  /** A framework middleware reads (and may limit or repair) the body before the adapter. */
  bodyReadByMiddleware?: boolean;
  /** Whether requests Node's HTTP parser refuses get JSON-RPC bodies (default `true`). */
  parserErrors?: boolean;
  /** Whether a request without `Host` gets a JSON-RPC body (default `true`). */
  missingHost?: boolean;
}

const call = (name: string, args: unknown, meta: Record<string, unknown> = META) =>
  rpc('tools/call', { name, arguments: args, _meta: meta });

/** Register the adapter contract tests under `describe(name)`. */
export function describeAdapterContract(name: string, options: AdapterContractOptions): void {
  describe(`adapter contract: ${name}`, () => {
    const probe = new Probe();
    let served: ServedEndpoint;
    let url: string;
    beforeAll(async () => {
      served = await options.serve(contractEndpoint(probe));
      url = served.url;
    });
    afterAll(() => served?.close());
    beforeEach(() => probe.reset());

    it('serves a tools/call with the endpoint principal', async () => {
      const answer = await post(url, call('echo', { text: 'héllo' }));
      expect([answer.status, answer.json.result.content[0].text]).toEqual([200, 'héllo']);
    });

    it('streams: the first SSE event arrives while the tool still works', async () => {
      const res = await open(url, call('stream_then_wait', {}, { ...META, progressToken: 'p' }));
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('notifications/progress');
      expect(probe.finished).toBe(false);
      probe.release.resolve();
      let rest = '';
      for (let r = await reader.read(); !r.done; r = await reader.read())
        rest += new TextDecoder().decode(r.value);
      expect(rest).toContain('"result"');
    });

    it('a client that closes the SSE stream aborts the handler signal', async () => {
      const controller = new AbortController();
      const body = call('wait_for_abort', { stream: true }, { ...META, progressToken: 'p' });
      const res = await open(url, body, controller.signal);
      expect(await firstChunk(res)).toContain('notifications/progress');
      controller.abort();
      expect(await probe.aborted.promise).toBe(true);
    });

    it('a client that goes away before a JSON answer aborts the handler signal', async () => {
      const controller = new AbortController();
      const pending = open(url, call('wait_for_abort', {}), controller.signal).catch(() => {});
      await probe.started.promise;
      controller.abort();
      expect(await probe.aborted.promise).toBe(true);
      await pending;
    });

    it('malformed bodies get JSON-RPC errors', async () => {
      const cases: [string | Uint8Array, number[]][] = [
        ['{', [-32700]],
        ['', [-32700, -32600]],
        ['[]', [-32600]],
        ['"text"', [-32700, -32600]],
        ['{"jsonrpc":"2.0","id":1}', [-32600]],
        ['{"jsonrpc":"2.0","id":{},"method":"tools/list"}', [-32600]],
        ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}', [-32600]],
        ['{"a":"x\u0000y"}', [-32700]], // an unescaped control character in a string
        [new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), [-32700]], // not UTF-8
      ];
      for (const [body, codes] of cases) refused(await post(url, body), codes, 400);
      const plain = await post(url, '{}', { headers: { 'content-type': 'text/plain' } });
      refused(plain, -32600, 415);
      // Never misread: a charset or coding is refused (415), or decoded by a body parser that knows it.
      const utf16 = { 'content-type': 'application/json; charset=utf-16' };
      for (const headers of [utf16, { 'content-encoding': 'gzip' }])
        refused(await post(url, rpc('tools/list'), { headers }), [-32600, -32700]);
    });

    it('thrown errors and unsendable results are -32603 with a JSON body, never detail', async () => {
      internal(await post(url, call('throws', {})));
      internal(await post(url, call('unserializable', {})));
      internal(await post(url, rpc('tools/list'), { headers: { 'x-auth-fails': '1' } }));
      const streamed = await post(
        url,
        call('throws', { afterProgress: true }, { ...META, progressToken: 'p' }),
      );
      expect(streamed.contentType).toMatch(/^text\/event-stream/);
      expect(streamed.json.error).toEqual({ code: -32603, message: 'Internal error' });
    });

    it('a body over the limit is 413 with a JSON-RPC body, declared or chunked', async () => {
      const huge = JSON.stringify(call('echo', { text: 'x'.repeat(2_000_000) }));
      refused(await post(url, huge), -32600, 413);
      const chunks = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < 40; i++)
            c.enqueue(new TextEncoder().encode(huge.slice(i * 52_000, (i + 1) * 52_000)));
          c.close();
        },
      });
      refused(await post(url, chunks), -32600, 413);
    });

    it.each([
      ['chunked', false],
      ['with a declared Content-Length', true],
    ])('a client still sending a body over the limit reads the 413 (%s): the rest is read and dropped', async (_, declared) => {
      // 1.2 MiB, a pause in which the endpoint refuses it, 6 MiB more (and the last chunk). A
      // server that closed at the refusal would reset the connection under the second write.
      const { host, pathname } = new URL(url);
      const [first, second] = [1_258_291, 6_291_456];
      const head = Object.entries({
        ...headersFor(call('echo', {})),
        ...(declared
          ? { 'content-length': String(first + second) }
          : { 'transfer-encoding': 'chunked' }),
      })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      const chunk = (bytes: number) =>
        declared ? 'a'.repeat(bytes) : `${bytes.toString(16)}\r\n${'a'.repeat(bytes)}\r\n`;
      let secondWrite: Error | null | undefined = null;
      const answer = await new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let closed = false;
        let written = false;
        // A whole answer: its head and the Content-Length bytes after it (the connection may stay open).
        const whole = () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const end = text.indexOf('\r\n\r\n');
          const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1];
          return (
            end !== -1 &&
            length !== undefined &&
            Buffer.byteLength(text.slice(end + 4)) >= Number(length)
          );
        };
        const settle = () =>
          (closed || whole()) && written && resolve(Buffer.concat(chunks).toString('utf8'));
        const socket = connect(Number(new URL(url).port), '127.0.0.1', () => {
          socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\n${head}\r\n${chunk(first)}`);
          setTimeout(() => {
            socket.write(`${chunk(second)}${declared ? '' : '0\r\n\r\n'}`, (error) => {
              secondWrite = error;
              written = true;
              settle();
            });
          }, 300);
        });
        socket.setTimeout(10_000, () => socket.destroy());
        socket.on('data', (c) => {
          chunks.push(c);
          settle();
        });
        socket.on('error', reject);
        socket.on('close', () => {
          closed = true;
          settle();
        });
      });
      expect(secondWrite).toBeFalsy();
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).toBe(-32600);
    });

    it('a deeply nested body is -32602 naming where, and nothing runs', async () => {
      const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
      const like = call('echo', { text: 'x', deep: 0 });
      const body = JSON.stringify(like).replace('"deep":0', `"deep":${deep}`);
      const answer = await post(url, body, { like });
      // A middleware that parsed the body may find it too deep to hand on (-32600) before the endpoint does.
      refused(answer, options.bodyReadByMiddleware ? [-32602, -32600] : -32602, 400);
      if (answer.json.error.code === -32602)
        expect(answer.json.error.data).toMatchObject({ problem: 'too-deep' });
      expect(probe.runs.echo).toBeUndefined();
    });

    it('NUL reaches a string argument; lone surrogates and numbers JSON cannot carry are -32602, in an id -32600', async () => {
      const nul = await post(url, call('echo', { text: 'a\u0000b' }));
      expect(nul.json.result.content[0].text).toBe('a\u0000b');
      for (const args of [{ text: 'x\ud800' }, { text: 'x', '\udc00': 1 }]) {
        const answer = await post(url, call('echo', args));
        refused(answer, -32602, 400);
        expect(answer.json.error.message).toMatch(/params\.arguments/);
      }
      const meta = {
        ...META,
        'io.modelcontextprotocol/clientInfo': { name: 'c\u0000', version: '1' },
      };
      refused(await post(url, call('echo', { text: 'x' }, meta)), -32602, 400);
      refused(await post(url, call('ec\u0000ho', {})), -32602);
      const like = call('echo', { text: 0 });
      const overflow = JSON.stringify(like).replace('"text":0', '"text":1e400');
      refused(await post(url, overflow, { like }), -32602, 400);
      // Where any value would do (a _meta key): refused, never passed on as what a parser made of it.
      const listing = rpc('tools/list', { _meta: { ...META, 'example.com/n': 0 } });
      const anywhere = JSON.stringify(listing).replace(
        '"example.com/n":0',
        '"example.com/n":1e400',
      );
      refused(await post(url, anywhere, { like: listing }), -32602, 400);
      // An id the client could not read back as its own: refused, and the answer carries no id.
      const oddId = await post(url, { ...rpc('tools/list'), id: 'id-\ud800' });
      refused(oddId, -32600, 400);
      expect(oddId.json).not.toHaveProperty('id');
      expect(oddId.json.error.message).toMatch(/id is not well-formed Unicode/);
      refused(await post(url, { ...call('echo', { text: 'x' }), id: '\udc00' }), -32600, 400);
      expect(probe.runs.echo).toBe(1);
    });

    it('undeclared and invalid arguments are -32602 naming the argument; the tool never runs', async () => {
      const big = 'v'.repeat(50_000);
      const undeclared = await post(url, call('echo', { text: 'x', extra: big }));
      refused(undeclared, -32602);
      expect(undeclared.json.error.data).toMatchObject({ argument: 'extra' });
      expect(undeclared.text.length).toBeLessThan(1000);
      refused(await post(url, call('echo', { text: 5 })), -32602);
      const missing = await post(url, call('echo', {}));
      expect(missing.json.error.data).toMatchObject({ argument: 'text' });
      const refusedByParse = await post(url, call('normalize', { n: '0' }));
      expect(refusedByParse.json.error).toMatchObject({ code: -32602, data: { argument: 'n' } });
      expect(probe.runs).toEqual({});
    });

    it('the handler and its context see the validated arguments', async () => {
      await post(url, call('normalize', { n: '7', extra: 'dropped by parse' }));
      expect(probe.seen).toEqual({ args: { n: 7 }, contextArguments: { n: 7 } });
    });

    it('spec rules: logging declared, unknown cursor, 2025-era initialize, structured text', async () => {
      const discover = await post(url, rpc('server/discover'));
      expect(discover.json.result.capabilities.logging).toEqual({});
      refused(await post(url, rpc('tools/list', { cursor: 'page-2' })), -32602);
      const initialize = {
        jsonrpc: '2.0',
        id: 9,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'old', version: '1' },
        },
      };
      const headerless = { 'mcp-protocol-version': undefined, 'mcp-method': undefined };
      for (const headers of [headerless, { 'mcp-protocol-version': '2025-06-18' }]) {
        const answer = await post(url, initialize, { headers });
        refused(answer, -32022, 400);
        expect(answer.json.error.data).toEqual({
          requested: '2025-06-18',
          supported: ['2026-07-28'],
        });
        expect(answer.json.error.message).toContain('2026-07-28');
      }
      // A modern request for the removed method (SEP-2575) is an unknown method, not a version problem.
      refused(await post(url, rpc('initialize')), -32601, 404);
      const structured = await post(url, call('structured', {}));
      expect(structured.json.result.content).toEqual([
        { type: 'text', text: 'Made it.' },
        { type: 'text', text: '{"ok":true,"n":1}' },
      ]);
    });

    it('a principal over the rate limit gets 429, Retry-After and a JSON-RPC error', async () => {
      const limited = await options.serve(
        contractEndpoint(probe, { rateLimit: { limit: 2, windowMs: 60_000 } }),
      );
      try {
        for (let i = 0; i < 2; i++)
          expect((await post(limited.url, call('echo', { text: 'x' }))).status).toBe(200);
        const over = await post(limited.url, call('echo', { text: 'x' }));
        refused(over, -31429, 429);
        expect(over.json.error.data.retryAfterMs).toBeGreaterThan(0);
        expect((await post(limited.url, rpc('tools/list'))).status).toBe(200);
      } finally {
        await limited.close();
      }
    });

    it.runIf(options.parserErrors !== false)(
      'a request Node cannot parse gets a JSON-RPC body, not an empty 400',
      async () => {
        const { host } = new URL(url);
        const head = `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n`;
        const control = await rawRequest(
          url,
          `${head}Mcp-Name: ec\x01ho\r\nContent-Length: 2\r\n\r\n{}`,
        );
        expect([control.status, control.headers['content-type']]).toEqual([
          400,
          'application/json',
        ]);
        expect(JSON.parse(control.body).error.code).toBe(-32600);
        const overflow = await rawRequest(url, `${head}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
        expect(overflow.status).toBe(431);
        expect(JSON.parse(overflow.body).error.code).toBe(-32600);
      },
    );

    it('an absolute-form request-target must name the Host it was sent with', async () => {
      const { host, pathname } = new URL(url);
      const body = JSON.stringify(rpc('tools/list'));
      const head = Object.entries(headersFor(rpc('tools/list')))
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      const send = (target: string) =>
        rawRequest(
          url,
          `POST ${target} HTTP/1.1\r\nHost: ${host}\r\n${head}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        );
      // RFC 9112 §3.2.2: the target's authority names the host; Host was checked, so they must agree.
      const elsewhere = await send(`http://evil.example${pathname}`);
      expect([elsewhere.status, elsewhere.headers['content-type']]).toEqual([
        400,
        'application/json',
      ]);
      expect(JSON.parse(elsewhere.body).error.code).toBe(-32600);
      const same = await send(`http://${host}${pathname}`);
      expect([same.status, JSON.parse(same.body).result.tools.length > 0]).toEqual([200, true]);
    });

    it('two Host fields, or a Host that is not one host[:port], get 400 (RFC 9112 §3.2)', async () => {
      const { host, pathname } = new URL(url);
      const body = JSON.stringify(rpc('tools/list'));
      const head = Object.entries(headersFor(rpc('tools/list')))
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      const send = (hostLines: string) =>
        rawRequest(
          url,
          `POST ${pathname} HTTP/1.1\r\n${hostLines}${head}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        );
      for (const lines of [
        `Host: ${host}\r\nHost: evil.example\r\n`,
        `Host: ${host}\r\nhost: ${host}\r\n`,
        `Host: a@${host}\r\n`,
        `Host: ${host}/x\r\n`,
        `Host: ${host}:1\r\n`,
      ]) {
        const r = await send(lines);
        expect([r.status, r.headers['content-type']], lines).toEqual([400, 'application/json']);
        expect(JSON.parse(r.body).error.code, lines).toBe(-32600);
      }
      const one = await send(`Host: ${host}\r\n`);
      expect(one.status).toBe(200);
    });

    it.runIf(options.missingHost !== false)(
      'a request without Host gets a JSON-RPC body',
      async () => {
        const path = new URL(url).pathname;
        for (const version of ['1.0', '1.1']) {
          const r = await rawRequest(
            url,
            `POST ${path} HTTP/${version}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
          );
          expect([r.status, r.headers['content-type']]).toEqual([400, 'application/json']);
          expect(JSON.parse(r.body).error.code).toBe(-32600);
        }
      },
    );
  });
}
