import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpEndpoint } from '@mrtr/server';
import { assertValidMessage } from '@mrtr/spec-schema';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpErrorHandler, mcpHandler } from '../src/index.js';

let server: Server;
let base: string;
const seenErrors: unknown[] = [];

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
  const app = express();
  // an upstream auth middleware, as an application would have
  app.use((req, res, next) => {
    if (req.headers['x-user']) res.locals.principal = { id: String(req.headers['x-user']) };
    next();
  });
  app.all('/raw/mcp', mcpHandler(endpoint, { principal: (_req, res) => res.locals.principal }));
  app.all(
    '/parsed/mcp',
    express.json(),
    mcpHandler(endpoint, { principal: (_req, res) => res.locals.principal }),
  );
  // A page handler (as the approval page) behind the form parsers many apps mount globally.
  const echo = (async (request: Request) =>
    new Response(
      `${request.headers.get('content-type')}|${await request.text()}`,
    )) as unknown as Parameters<typeof mcpHandler>[0];
  app.all('/form/flat', express.urlencoded(), mcpHandler(echo));
  app.all('/form/extended', express.urlencoded({ extended: true }), mcpHandler(echo));
  app.all(
    '/broken/mcp',
    mcpHandler(endpoint, { principal: () => Promise.reject(new Error('auth backend down')) }),
  );
  app.all(
    '/guarded/mcp',
    mcpHandler(endpoint, { principal: () => Promise.reject(new Error('auth backend down')) }),
  );
  app.all('/denied/mcp', (_req, _res, next) =>
    next(Object.assign(new Error('token expired'), { status: 401 })),
  );
  app.use(['/guarded/mcp', '/denied/mcp'], mcpErrorHandler({ onError: (e) => seenErrors.push(e) }));
  app.use(
    (error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      seenErrors.push(error);
      res.status(503).json({ error: 'unavailable' });
    },
  );
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'whoami',
    arguments: { note: 'héllo' },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'whoami',
};

describe('mcpHandler (Express 5)', () => {
  for (const path of ['/raw/mcp', '/parsed/mcp']) {
    it(`serves the endpoint with the middleware's principal (${path})`, async () => {
      const res = await fetch(base + path, {
        method: 'POST',
        headers: { ...headers, 'x-user': 'erin' },
        body,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const reply = await res.json();
      // Both messages of the exchange are valid 2026-07-28 (the official schema.json).
      assertValidMessage(JSON.parse(body));
      assertValidMessage(reply, { method: 'tools/call' });
      expect(reply.result.content[0].text).toBe('erin:{"note":"héllo"}');
    });
  }

  it('answers 401 when no principal is known', async () => {
    const res = await fetch(`${base}/raw/mcp`, { method: 'POST', headers, body });
    expect(res.status).toBe(401);
  });

  it('passes adapter errors to the Express error handlers', async () => {
    const res = await fetch(`${base}/broken/mcp`, { method: 'POST', headers, body });
    expect(res.status).toBe(503);
    expect(String(seenErrors.at(-1))).toContain('auth backend down');
  });

  it('mcpErrorHandler answers adapter and middleware errors with JSON-RPC bodies', async () => {
    const failed = await fetch(`${base}/guarded/mcp`, { method: 'POST', headers, body });
    expect(failed.status).toBe(500);
    expect((await failed.json()).error).toEqual({ code: -32603, message: 'Internal error' });
    expect(String(seenErrors.at(-1))).toContain('auth backend down');
    const denied = await fetch(`${base}/denied/mcp`, { method: 'POST', headers, body });
    expect(denied.status).toBe(401);
    expect((await denied.json()).error).toEqual({ code: -32600, message: 'token expired' });
  });

  it('passes on a form a body parser already read as the form, repeated fields repeated', async () => {
    const post = (path: string, form: string) =>
      fetch(base + path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
    const flat = await post('/form/flat', 'a=1&b=x%26y+z&a=2');
    expect(await flat.text()).toBe('application/x-www-form-urlencoded|a=1&a=2&b=x%26y+z');
    const extended = await post('/form/extended', 'csrf=t&decision=approve');
    expect(await extended.text()).toBe('application/x-www-form-urlencoded|csrf=t&decision=approve');
    // A U+FFFD in a field is passed on as the page reads it on node:http, not refused.
    const replacement = await post('/form/flat', 'reason=abc%EF%BF%BD');
    expect(await replacement.text()).toBe('application/x-www-form-urlencoded|reason=abc%EF%BF%BD');
    // Nested values are no form any more; as JSON text under a form's type a form reader would
    // take `"}` and what follows for fields: refused.
    const nested = await post('/form/extended', 'note[x]=1&comment=hi%26decision%3Dapprove');
    expect(nested.status).toBe(415);
    expect((await nested.json()).error.code).toBe(-32600);
  });

  it('keeps the endpoint rules: GET gets 405', async () => {
    const res = await fetch(`${base}/raw/mcp`, { headers: { 'x-user': 'erin' } });
    expect(res.status).toBe(405);
  });
});
