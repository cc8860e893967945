import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createMcpEndpoint, type Principal } from '@mrtr/server';
import { assertValidMessage } from '@mrtr/spec-schema';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpHandler } from '../src/index.js';

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
      await c.req.json();
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
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve()) as Server;
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
  for (const path of ['/mcp', '/peek/mcp']) {
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
