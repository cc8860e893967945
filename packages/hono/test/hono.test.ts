import { createServer, request as httpRequest, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { createMcpEndpoint, type Principal } from '@mrtr/server';
import { assertValidMessage } from '@mrtr/spec-schema';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpHandler, pathAsSent, requestErrorHandler } from '../src/index.js';

let server: Server;
let base: string;
const failures: unknown[] = [];

beforeAll(async () => {
  const endpoint = createMcpEndpoint({
    serverInfo: { name: 't', version: '1' },
    tools: [
      {
        name: 'whoami',
        inputSchema: { type: 'object' },
        handler: (args, ctx) => ({
          resultType: 'complete',
          content: [{ type: 'text', text: `${ctx.principal.id}:${JSON.stringify(args)}` }],
        }),
      },
    ],
  });
  type AppEnv = { Variables: { principal: Principal | undefined } };
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    const user = c.req.header('x-user');
    c.set('principal', user ? { id: user } : undefined);
    await next();
  });
  app.all('/mcp', mcpHandler<AppEnv>(endpoint, { principal: (c) => c.get('principal') }));
  // a middleware that reads the body before the adapter does
  app.all(
    '/peek/mcp',
    async (c, next) => {
      await c.req.json().catch(() => undefined); // a middleware that reads what it can
      await next();
    },
    mcpHandler<AppEnv>(endpoint, { principal: (c) => c.get('principal') }),
  );
  app.all(
    '/bytes/mcp',
    async (c, next) => {
      await c.req.arrayBuffer();
      await next();
    },
    mcpHandler<AppEnv>(endpoint, { principal: (c) => c.get('principal') }),
  );
  app.all(
    '/broken/mcp',
    mcpHandler<AppEnv>(endpoint, {
      principal: () => Promise.reject(new Error('auth backend down')),
      onError: (e) => failures.push(e),
    }),
  );
  await new Promise<void>((resolve) => {
    const errorHandler = requestErrorHandler((e) => failures.push(e));
    server = createServer(getRequestListener(app.fetch, { errorHandler }));
    server.listen(0, '127.0.0.1', () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'whoami',
    arguments: { n: 1 },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});
const headers = {
  'content-type': 'application/json',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'whoami',
};

describe('mcpHandler (Hono 4)', () => {
  for (const path of ['/mcp', '/peek/mcp', '/bytes/mcp']) {
    it(`serves the endpoint with the context's principal (${path})`, async () => {
      const res = await fetch(base + path, {
        method: 'POST',
        headers: { ...headers, 'x-user': 'frank' },
        body,
      });
      expect(res.status).toBe(200);
      const reply = await res.json();
      // Both messages of the exchange are valid 2026-07-28 (the official schema.json).
      assertValidMessage(JSON.parse(body));
      assertValidMessage(reply, { method: 'tools/call' });
      expect(reply.result.content[0].text).toBe('frank:{"n":1}');
    });
  }

  // helper-161 M2: after c.req.json(), bytes that are not UTF-8 were passed on as U+FFFD.
  it('a body a middleware decoded: bytes that are not UTF-8 or two BOMs are -32700, as on @mrtr/node; its bytes are passed on as sent', async () => {
    const [before, after] = body.split('"n":1') as [string, string];
    const notUtf8 = Buffer.concat([
      Buffer.from(`${before}"n":"plan`),
      Buffer.from([0xff]),
      Buffer.from(`"${after}`),
    ]);
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    for (const path of ['/mcp', '/peek/mcp', '/bytes/mcp']) {
      for (const sent of [notUtf8, Buffer.concat([bom, bom, Buffer.from(body)])]) {
        const res = await fetch(base + path, {
          method: 'POST',
          headers: { ...headers, 'x-user': 'frank' },
          body: sent,
        });
        expect([res.status, (await res.json()).error?.code], path).toEqual([400, -32700]);
      }
    }
  });

  it('answers 401 when no principal is known', async () => {
    const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body });
    expect(res.status).toBe(401);
  });

  it('a throwing principal function is 500 with a JSON-RPC -32603, not a text page', async () => {
    const res = await fetch(`${base}/broken/mcp`, { method: 'POST', headers, body });
    expect(res.status).toBe(500);
    expect((await res.json()).error).toEqual({ code: -32603, message: 'Internal error' });
    expect(String(failures.at(-1))).toContain('auth backend down');
  });
});

describe('requestErrorHandler on @hono/node-server', () => {
  /** One raw HTTP/1.1 POST: fetch would write the Host itself. */
  function rawPost(host: string, target = '/mcp'): Promise<string> {
    const { port } = server.address() as AddressInfo;
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end(
          `POST ${target} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      });
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk;
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
  }

  it.each([
    '[0:0:0:0:0:0:0:1]',
    '[::ffff:127.0.0.1]',
    '[::127.0.0.1]',
  ])('a Host its URL parser writes otherwise (%s) gets 400 with a JSON-RPC body, not an empty one', async (host) => {
    const reply = await rawPost(host);
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    const json = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));
    expect(json).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Bad Request: Invalid host header' },
    });
    assertValidMessage(json);
  });
});

describe('which paths reach the handler (Hono routes them; pathAsSent makes them exact)', () => {
  const PATHS = ['/MCP', '/mcp/', '/%6dcp', '/mcp;x', '//mcp'];
  const DOT_SEGMENTS = ['/a/../mcp', '/./mcp', '/a/%2e%2e/mcp', '/%2e%2e/mcp'];
  const endpoint = createMcpEndpoint({ serverInfo: { name: 't', version: '1' }, tools: [] });
  const list = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/list',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  const listHeaders = {
    'content-type': 'application/json',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/list',
  };

  /**
   * `app` on @hono/node-server: each of `targets` sent as it is (node:http
   * does not resolve dot segments, as fetch would) → status and body.
   */
  async function statuses(app: Hono, targets: string[]): Promise<Record<string, [number, string]>> {
    const own = createServer(getRequestListener(app.fetch));
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    const { port } = own.address() as AddressInfo;
    const post = (path: string) =>
      new Promise<[number, string]>((resolve, reject) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          headers: listHeaders,
        });
        req.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve([res.statusCode ?? 0, text]));
        });
        req.on('error', reject);
        req.end(list);
      });
    try {
      const out: Record<string, [number, string]> = {};
      for (const target of targets) out[target] = await post(target);
      return out;
    } finally {
      await new Promise<void>((r) => own.close(() => r()));
    }
  }

  it('by default Hono decodes escapes and @hono/node-server resolves dot segments: /%6dcp and /a/../mcp reach /mcp', async () => {
    const app = new Hono();
    app.all('/mcp', mcpHandler(endpoint, { principal: () => ({ id: 'alice' }) }));
    const got = await statuses(app, ['/mcp', ...PATHS, ...DOT_SEGMENTS]);
    expect(got['/mcp']?.[0]).toBe(200);
    for (const path of ['/%6dcp', ...DOT_SEGMENTS]) expect(got[path]?.[0], path).toBe(200);
    // Case-sensitive and strict by default: the others are Hono's own 404.
    for (const path of ['/MCP', '/mcp/', '/mcp;x', '//mcp']) expect(got[path]?.[0], path).toBe(404);
  });

  it("with pathAsSent and the README's notFound, only /mcp is the endpoint and the rest get a JSON-RPC 404", async () => {
    // As the README shows it.
    const app = new Hono({ getPath: pathAsSent });
    app.notFound((c) => {
      const error = { code: -32600, message: 'Not Found: no MCP endpoint at this path' };
      return c.json({ jsonrpc: '2.0', error }, 404);
    });
    app.all('/mcp', mcpHandler(endpoint, { principal: () => ({ id: 'alice' }) }));
    const got = await statuses(app, ['/mcp', '/mcp?x=1', ...PATHS, ...DOT_SEGMENTS]);
    expect(got['/mcp']?.[0]).toBe(200);
    expect(got['/mcp?x=1']?.[0]).toBe(200);
    for (const path of [...PATHS, ...DOT_SEGMENTS]) {
      expect(got[path]?.[0], path).toBe(404);
      expect(JSON.parse(got[path]?.[1] ?? '').error.code, path).toBe(-32600);
    }
  });

  it('pathAsSent reads the absolute form after its authority, and the parsed URL where no IncomingMessage is bound', () => {
    const request = new Request('http://127.0.0.1/mcp?x=1');
    expect(
      pathAsSent(request, { env: { incoming: { url: 'http://127.0.0.1/a/../mcp?x=1' } } }),
    ).toBe('/a/../mcp');
    expect(pathAsSent(request, { env: { incoming: { url: 'http://127.0.0.1' } } })).toBe('/');
    expect(pathAsSent(request, { env: { incoming: { url: '/%6dcp?q' } } })).toBe('/%6dcp');
    // Bun, Deno, Workers: the Request alone (escapes kept, dot segments already resolved by the runtime).
    expect(pathAsSent(new Request('http://127.0.0.1/%6dcp'))).toBe('/%6dcp');
    expect(pathAsSent(request, { env: {} })).toBe('/mcp');
  });
});
