import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { createMcpEndpoint } from '@mrtr/server';
import { assertValidMessage } from '@mrtr/spec-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpHttpServer, toNodeHandler } from '../src/index.js';

let server: Server;
let base: string;

beforeAll(async () => {
  const endpoint = createMcpEndpoint({
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

  it('gives 401 when neither the host nor the endpoint knows the caller', async () => {
    const res = await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(401);
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
});

describe('createMcpHttpServer: requests Node would answer itself', () => {
  /** Send raw bytes and read until the server closes the connection (or 5 s pass). */
  function raw(port: number, request: string): Promise<{ head: string; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1' }, () => socket.write(request));
      const chunks: Buffer[] = [];
      socket.setTimeout(5000, () => socket.destroy());
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => {
        const all = Buffer.concat(chunks).toString('utf8');
        const split = all.indexOf('\r\n\r\n');
        resolve({ head: all.slice(0, Math.max(split, 0)), body: all.slice(split + 4) });
      });
    });
  }

  it('answers an unknown Expect with 417 and CONNECT with 405, each with a JSON-RPC body', async () => {
    const endpoint = createMcpEndpoint({ serverInfo: { name: 't', version: '1' }, tools: [] });
    const own = createMcpHttpServer(endpoint);
    await new Promise<void>((r) => own.listen(0, '127.0.0.1', r));
    const { port } = own.address() as AddressInfo;
    try {
      const expectation = await raw(
        port,
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nExpect: foo\r\nContent-Length: 2\r\n\r\n{}`,
      );
      expect(expectation.head).toMatch(/^HTTP\/1\.1 417 /);
      expect(expectation.head.toLowerCase()).toContain('content-type: application/json');
      expect(JSON.parse(expectation.body).error.code).toBe(-32600);
      // Node drops a CONNECT without a listener: no answer at all.
      const tunnel = await raw(
        port,
        `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
      );
      expect(tunnel.head).toMatch(/^HTTP\/1\.1 405 /);
      expect(JSON.parse(tunnel.body).error.code).toBe(-32600);
    } finally {
      own.closeAllConnections();
      await new Promise<void>((r) => own.close(() => r()));
    }
  });
});
