import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { createMcpEndpoint } from '@mrtr/server';
import { assertValidMessage } from '@mrtr/spec-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNodeHandler } from '../src/index.js';

let server: Server;
let base: string;

/** One tool, `whoami`, answering the principal's id. */
const whoami = () =>
  createMcpEndpoint({
    serverInfo: { name: 't', version: '1' },
    tools: [
      {
        name: 'whoami',
        inputSchema: { type: 'object' },
        handler: (_a, ctx) => ({
          resultType: 'complete',
          content: [{ type: 'text', text: ctx.principal.id }],
        }),
      },
    ],
  });

beforeAll(async () => {
  const endpoint = whoami();
  server = createServer(
    toNodeHandler(endpoint, {
      path: '/api/mcp',
      principal: (req) => (req.headers['x-user'] === 'dave' ? { id: 'dave' } : undefined),
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const body = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'whoami',
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
};
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'whoami',
};

describe('toNodeHandler', () => {
  it('serves the endpoint at its path with the principal the host resolved', async () => {
    const res = await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { ...headers, 'x-user': 'dave' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const reply = await res.json();
    // Both messages of the exchange are valid 2026-07-28 (the official schema.json).
    assertValidMessage(body);
    assertValidMessage(reply, { method: 'tools/call' });
    expect(reply.result.content[0].text).toBe('dave');
  });

  it('serves a request a middleware paused (req.pause()), where it waited for ever (helper-161 L1)', async () => {
    const handle = toNodeHandler(whoami(), { path: false, principal: () => ({ id: 'erin' }) });
    const paused = createServer((req, res) => {
      req.pause();
      // As a middleware would: it looks at the headers, then hands the request on later.
      setTimeout(() => void handle(req, res), 20);
    });
    await new Promise<void>((r) => paused.listen(0, '127.0.0.1', r));
    try {
      const { port } = paused.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      expect(res.status).toBe(200);
      expect((await res.json()).result.content[0].text).toBe('erin');
    } finally {
      paused.closeAllConnections();
      await new Promise<void>((r) => paused.close(() => r()));
    }
  });

  it('flushes each event of a stream through a compressing middleware (res.flush), where it was held to the end (helper-161 L2)', async () => {
    const endpoint = createMcpEndpoint({
      serverInfo: { name: 't', version: '1' },
      tools: [
        {
          name: 'slow',
          inputSchema: { type: 'object' },
          handler: async (_a, ctx) => {
            ctx.log('info', 'started');
            await new Promise((r) => setTimeout(r, 50));
            return { resultType: 'complete', content: [{ type: 'text', text: 'done' }] };
          },
        },
      ],
    });
    const handle = toNodeHandler(endpoint, { path: false, principal: () => ({ id: 'erin' }) });
    let flushes = 0;
    const compressing = createServer((req, res) => {
      // What compression() adds: a flush that sends what it holds.
      (res as typeof res & { flush: () => void }).flush = () => {
        flushes++;
      };
      void handle(req, res);
    });
    await new Promise<void>((r) => compressing.listen(0, '127.0.0.1', r));
    try {
      const { port } = compressing.address() as AddressInfo;
      const logged = {
        ...body,
        params: {
          name: 'slow',
          _meta: { ...body.params._meta, 'io.modelcontextprotocol/logLevel': 'info' },
        },
      };
      const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'mcp-name': 'slow' },
        body: JSON.stringify(logged),
      });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(await res.text()).toContain('done');
      expect(flushes).toBeGreaterThanOrEqual(2);
    } finally {
      compressing.closeAllConnections();
      await new Promise<void>((r) => compressing.close(() => r()));
    }
  });

  it('gives 401 when neither the host nor the endpoint knows the caller', async () => {
    const res = await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(401);
  });

  it('answers a declared body over the limit with 413 within 5 s even when the client stalls', async () => {
    const { port } = new URL(base);
    const started = Date.now();
    const status = await new Promise<string>((resolve, reject) => {
      const socket = connect({ port: Number(port), host: '127.0.0.1' }, () =>
        socket.write(
          `POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n\r\n${'a'.repeat(100_000)}`,
        ),
      );
      socket.setTimeout(10_000, () => socket.destroy());
      socket.once('data', (c) => {
        resolve(c.toString('latin1').split('\r\n')[0] as string);
        socket.destroy();
      });
      socket.on('error', reject);
      socket.on('close', () => resolve('closed without an answer'));
    });
    expect(status).toMatch(/^HTTP\/1\.1 413 /);
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('answers more header fields than Node keeps with 431, not 415 for a Content-Type Node left out', async () => {
    const { port } = new URL(base);
    const send = (fields: number) =>
      new Promise<string>((resolve, reject) => {
        const text = JSON.stringify(body);
        const filler = Array.from({ length: fields }, (_, i) => `x-${i}: a\r\n`).join('');
        const socket = connect({ port: Number(port), host: '127.0.0.1' }, () =>
          socket.write(
            `POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-User: dave\r\n${filler}` +
              `Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n` +
              `Mcp-Method: tools/call\r\nMcp-Name: whoami\r\nContent-Type: application/json\r\n` +
              `Content-Length: ${text.length}\r\nConnection: close\r\n\r\n${text}`,
          ),
        );
        let answer = '';
        socket.on('data', (c) => {
          answer += c.toString('latin1');
        });
        socket.on('error', reject).on('close', () => resolve(answer));
      });
    const refused = await send(1100);
    expect(refused).toMatch(/^HTTP\/1\.1 431 /);
    expect(refused).toContain('"code":-32600');
    expect(refused).toContain('more than 1000 header fields');
    // Well under the count, the same request is served.
    expect(await send(900)).toMatch(/^HTTP\/1\.1 200 /);
    // A server that keeps every field (maxHeadersCount 0) serves it whole.
    server.maxHeadersCount = 0;
    try {
      expect(await send(1100)).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      server.maxHeadersCount = null as unknown as number;
    }
  });

  it('gives 404 on other paths', async () => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'x-user': 'dave' },
      body: '{}',
    });
    expect(res.status).toBe(404);
  });

  it('matches the path with a query string, and not a longer path sharing its prefix', async () => {
    const call = (path: string) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { ...headers, 'x-user': 'dave' },
        body: JSON.stringify(body),
      });
    expect((await call('/api/mcp?trace=1')).status).toBe(200);
    expect((await call('/api/mcpx')).status).toBe(404);
    expect((await call('/api/mcp/extra')).status).toBe(404);
  });

  it('serves the path only as sent: dot segments, escapes, a trailing slash or another case are other paths (404)', async () => {
    const { port } = new URL(base);
    // fetch would normalize the target: written raw on a socket.
    const statusOf = (target: string) =>
      new Promise<string>((resolve, reject) => {
        const text = JSON.stringify(body);
        const socket = connect({ port: Number(port), host: '127.0.0.1' }, () =>
          socket.write(
            `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: whoami\r\nX-User: dave\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
          ),
        );
        socket.once('data', (c) => {
          resolve((c.toString('latin1').split('\r\n')[0] as string).split(' ')[1] as string);
          socket.destroy();
        });
        socket.on('error', reject);
      });
    expect(await statusOf('/api/mcp')).toBe('200');
    expect(await statusOf(`http://127.0.0.1:${port}/api/mcp?x=1`)).toBe('200');
    for (const target of [
      '/api/x/../mcp',
      '/api/./mcp',
      '/api/%6dcp',
      '/api/mcp/',
      '/API/mcp',
      '//api/mcp',
      `http://127.0.0.1:${port}/api/x/../mcp`,
    ])
      expect(await statusOf(target), target).toBe('404');
  });
});
