import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpEndpoint, type McpEndpoint } from '@mrtr/server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { directlyServable, headerOf, writeReply } from '../src/direct.js';
import { toNodeHandler } from '../src/index.js';

/** What `authenticate` and the handler saw of the web Request, per request. */
const seen: Record<string, unknown>[] = [];
let served = 0;

function endpoint(): McpEndpoint {
  const e = createMcpEndpoint({
    serverInfo: { name: 't', version: '1' },
    authenticate(request) {
      seen.push({
        instance: request instanceof Request,
        auth: request.headers.get('Authorization'),
        has: request.headers.has('x-absent'),
        headers: request.headers instanceof Headers,
        copied: new Headers(request.headers).get('mcp-name'),
        url: request.url,
        method: request.method,
      });
      return request.headers.get('authorization') === 'Bearer t' ? { id: 'p' } : undefined;
    },
    tools: [
      {
        name: 'peek',
        inputSchema: { type: 'object' },
        handler: (_a, ctx) => {
          const names: string[] = [];
          ctx.httpRequest.headers.forEach((_value, name) => {
            names.push(name);
          });
          seen.push({ names, cache: ctx.httpRequest.cache });
          return { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] };
        },
      },
    ],
  });
  const serve = e.serve;
  if (!serve) throw new Error('createMcpEndpoint gives serve');
  e.serve = (exchange, context) => {
    served++;
    return serve(exchange, context);
  };
  return e;
}

const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'peek',
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});
const headers = {
  'content-type': 'application/json',
  authorization: 'Bearer t',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'peek',
};

const servers: Server[] = [];
async function start(webStandard: boolean): Promise<string> {
  const server = createServer(toNodeHandler(endpoint(), { webStandard }));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

describe('toNodeHandler: the direct path and the converted one', () => {
  let direct: string;
  let web: string;
  beforeAll(async () => {
    direct = await start(false);
    web = await start(true);
  });
  beforeEach(() => {
    seen.length = 0;
    served = 0;
  });

  it('serves a plain request directly, and the web Request it builds looks the same', async () => {
    const answers: unknown[] = [];
    for (const base of [direct, web]) {
      const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body });
      answers.push([res.status, await res.json()]);
    }
    expect(served).toBe(1); // the direct server only
    expect(answers[0]).toEqual(answers[1]);
    const [auth, handler, webAuth, webHandler] = seen;
    expect(auth).toEqual({ ...(webAuth as object), url: expect.stringMatching(/\/mcp$/) });
    expect(auth).toMatchObject({
      instance: true,
      auth: 'Bearer t',
      has: false,
      method: 'POST',
      headers: true,
      copied: 'peek',
    });
    expect(handler).toEqual(webHandler);
    expect((handler as { names: string[] }).names).toContain('mcp-name');
  });

  it('leaves a request that is not plain to the conversion, with the same answer', async () => {
    const res = await fetch(`${direct}/mcp/./`, { method: 'POST', headers, body });
    expect(served).toBe(0);
    expect(res.status).toBe(404);
  });

  it('joins repeated fields as Headers.get does', () => {
    const req = {
      headers: { authorization: 'a', 'mcp-method': 'x, y' },
      rawHeaders: [
        'Authorization',
        'a',
        'Mcp-Method',
        'x',
        'authorization',
        'b',
        'MCP-METHOD',
        'y',
      ],
    } as unknown as IncomingMessage;
    expect(headerOf(req, 'authorization')).toBe('a, b');
    expect(headerOf(req, 'mcp-method')).toBe('x, y');
    expect(headerOf(req, 'origin')).toBeNull();
  });
});

describe('directlyServable', () => {
  const message = (host: string | undefined, url = '/mcp') =>
    ({
      httpVersionMajor: 1,
      headers: host === undefined ? {} : { host },
      url,
      readableFlowing: null,
      readableDidRead: false,
      readableEnded: false,
    }) as unknown as IncomingMessage;

  it('takes plain hosts and targets with any port up to 65535', () => {
    for (const host of ['127.0.0.1:3000', '127.0.0.1:60999', 'localhost', 'a.example:65535'])
      expect(directlyServable(message(host)), host).toBe(true);
  });

  it('leaves the rest to the conversion', () => {
    for (const host of [
      undefined,
      'LOCALHOST',
      '127.0.0.1:80',
      '127.0.0.1:080',
      'h:65536',
      '[::1]:3000',
    ])
      expect(directlyServable(message(host)), String(host)).toBe(false);
    for (const url of ['/mcp/../mcp', '/a\\b', 'http://x/mcp', '/m cp', '*'])
      expect(directlyServable(message('localhost', url)), url).toBe(false);
  });
});

describe('writeReply: whole replies of one turn written together', () => {
  /** A response that records what was written to it, in the order of every response's writes. */
  function recorder(log: string[], name: string, refuse = false) {
    return {
      writeHead(status: number, headers: Record<string, string>) {
        if (refuse) throw new TypeError('Invalid character in header content');
        log.push(`${name} head ${status} ${headers['content-length']}`);
      },
      end(body?: string) {
        log.push(`${name} end ${body ?? ''}`);
      },
    } as unknown as ServerResponse;
  }
  const reply = (body: string | null) => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body,
  });

  it('writes nothing until the turn ends, then every reply of the turn in order', async () => {
    const log: string[] = [];
    const first = writeReply(recorder(log, 'a'), reply('{"x":"é"}'));
    const second = writeReply(recorder(log, 'b'), reply(null));
    await Promise.resolve();
    await Promise.resolve();
    expect(log).toEqual([]);
    await Promise.all([first, second]);
    expect(log).toEqual(['a head 200 10', 'a end {"x":"é"}', 'b head 200 0', 'b end ']);
  });

  it('rejects the reply Node refuses and still writes the others of its turn', async () => {
    const log: string[] = [];
    const refused = writeReply(recorder(log, 'a', true), reply('{}'));
    const written = writeReply(recorder(log, 'b'), reply('{}'));
    await expect(refused).rejects.toThrow(/Invalid character/);
    await written;
    expect(log).toEqual(['b head 200 2', 'b end {}']);
  });

  it('answers concurrent requests on a real server, each with its own body', async () => {
    const server = createServer(toNodeHandler(endpoint(), { path: '/mcp' }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      const bodies = await Promise.all(
        Array.from({ length: 24 }, async (_, i) => {
          const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
            method: 'POST',
            headers,
            body: body.replace('"id":1', `"id":${i}`),
          });
          return (await response.json()) as { id: number; result?: { content: unknown[] } };
        }),
      );
      expect(bodies.map((b) => b.id)).toEqual(Array.from({ length: 24 }, (_, i) => i));
      expect(bodies.every((b) => b.result?.content.length === 1)).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
