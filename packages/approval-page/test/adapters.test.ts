/**
 * The page mounted beside `/mcp` as the README shows it, on node:http, Express
 * and Hono, driven over real HTTP: sign in, approve, and the MCP endpoint
 * still answers on its own path.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { mcpHandler as expressHandler } from '@mrtr/express';
import { mcpHandler as honoHandler } from '@mrtr/hono';
import { toNodeHandler } from '@mrtr/node';
import { createMcpEndpoint } from '@mrtr/server';
import express from 'express';
import { Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ApprovalPage,
  createApprovalChannel,
  createApprovalPage,
  MemoryApprovalStore,
} from '../src/index.js';
import { USERS } from './helpers.js';
import { approval } from './store-contract.js';

const endpoint = createMcpEndpoint({
  serverInfo: { name: 'adapters-test', version: '0.0.0' },
  tools: [],
  authenticate: () => undefined,
});

const mounts: Record<string, (page: ApprovalPage) => RequestListener> = {
  'node:http': (page) => {
    const mcp = toNodeHandler(endpoint, { path: '/mcp' });
    const approvals = getRequestListener(page);
    return (req, res) => {
      if (req.url?.startsWith('/approve/')) void approvals(req, res);
      else void mcp(req, res);
    };
  },
  'Express 5': (page) => {
    const app = express();
    app.all('/mcp', expressHandler(endpoint));
    app.all('/approve/{*rest}', expressHandler(page));
    return app;
  },
  'Express 5 behind global body parsers': (page) => {
    // What many apps already have: the form reaches the page as a parsed object, passed on as a form.
    const app = express();
    app.use(express.json(), express.urlencoded());
    app.all('/mcp', expressHandler(endpoint));
    app.all('/approve/{*rest}', expressHandler(page));
    return app;
  },
  'Hono 4': (page) => {
    const app = new Hono();
    app.all('/mcp', honoHandler(endpoint));
    app.all('/approve/*', (c) => page(c.req.raw));
    return getRequestListener(app.fetch);
  },
};

const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
});

describe.each(Object.entries(mounts))('mounted on %s', (_, mount) => {
  it('serves sign-in, the page and the decision beside /mcp', async () => {
    let listener: RequestListener | undefined;
    const server = createServer((req, res) => listener?.(req, res));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const store = new MemoryApprovalStore();
    const channel = createApprovalChannel({ store, origin });
    listener = mount(createApprovalPage({ store, origin, signIn: { users: USERS } }));

    const a = approval();
    const url = await channel.open(a);
    const first = await fetch(url, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const form = { origin, 'content-type': 'application/x-www-form-urlencoded' };
    const signIn = await fetch(`${origin}/approve/sign-in`, {
      method: 'POST',
      headers: form,
      body: `principal=alice&password=${USERS.alice}&return=${encodeURIComponent(new URL(url).pathname)}`,
      redirect: 'manual',
    });
    expect(signIn.status).toBe(303);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const shown = await fetch(url, { headers: { cookie } });
    expect(shown.status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await shown.text())?.[1] ?? '';
    const decided = await fetch(url, {
      method: 'POST',
      headers: { ...form, cookie },
      body: `csrf=${csrf}&decision=approve`,
      redirect: 'manual',
    });
    expect(decided.status).toBe(303);
    expect(await channel.decision(a.id, a)).toMatchObject({ status: 'approved' });
    const css = await fetch(`${origin}/approve/assets/page.css`);
    expect(css.headers.get('content-security-policy')).toContain("default-src 'none'");
    // The MCP endpoint still answers on its path (401: this test's endpoint knows no one).
    expect((await fetch(`${origin}/mcp`, { method: 'POST' })).status).toBe(401);
  });
});
