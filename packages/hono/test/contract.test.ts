import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { serve } from '@hono/node-server';
import { createHttpServer } from '@mrtr/node';
import { createMcpEndpoint, type McpEndpoint } from '@mrtr/server';
import { describeAdapterContract } from '@mrtr/server/adapter-contract-tests';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { mcpHandler } from '../src/index.js';

/**
 * Serve through Hono on `@hono/node-server` as the quick start does (`createServer:
 * createHttpServer`), with or without a middleware that reads the body first.
 */
function serveHono(peek: boolean) {
  return async (endpoint: McpEndpoint) => {
    const app = new Hono();
    if (peek)
      app.use('/mcp', async (c, next) => {
        // A tolerant body-reading middleware (a logger, a router on a body field).
        await c.req.json().catch(() => undefined);
        await next();
      });
    app.all('/mcp', mcpHandler(endpoint));
    let server!: Server;
    await new Promise<void>((resolve) => {
      const options = { fetch: app.fetch, port: 0, hostname: '127.0.0.1' };
      server = serve({ ...options, createServer: createHttpServer }, () => resolve()) as Server;
    });
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/mcp`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  };
}

describeAdapterContract('hono', { serve: serveHono(false) });
describeAdapterContract('hono behind a body-reading middleware', {
  serve: serveHono(true),
  bodyReadByMiddleware: true,
});

/** An endpoint with no tools whose `authenticate` takes `Bearer t`: `tools/list` is served (200). */
function toollessEndpoint(): McpEndpoint {
  return createMcpEndpoint({
    serverInfo: { name: 't', version: '1' },
    tools: [],
    authenticate: (r) => (r.headers.get('authorization') === 'Bearer t' ? { id: 't' } : undefined),
  });
}

const LIST = JSON.stringify({
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

/** POST `tools/list` over a raw socket with the request line `line` and `host` lines; the whole answer. */
function rawList(port: string, line: string, host: string): Promise<string> {
  const head =
    'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
    'MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nAuthorization: Bearer t\r\n';
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.end(`${line}\r\n${host}${head}Content-Length: ${LIST.length}\r\n\r\n${LIST}`),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

describe('hono on @hono/node-server: a request without Host', () => {
  it('HTTP/1.0 may omit Host; it gets 400 with a JSON-RPC body, not the made-up URL served', async () => {
    const served = await serveHono(false)(toollessEndpoint());
    try {
      const { port, host } = new URL(served.url);
      const own = await rawList(port, 'POST /mcp HTTP/1.0', `Host: ${host}\r\n`);
      expect(own).toMatch(/^HTTP\/1\.[01] 200 /);
      const answer = await rawList(port, 'POST /mcp HTTP/1.0', '');
      expect(answer).toMatch(/^HTTP\/1\.[01] 400 /);
      const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
      expect(JSON.parse(body).error.code).toBe(-32600);
    } finally {
      await served.close();
    }
  });
});
