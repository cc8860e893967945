/**
 * `listen` (and so every example app) gives a JSON-RPC body even where Node
 * would answer by itself: an unknown `Expect`, `CONNECT`, no `Host`.
 */
import { connect } from 'node:net';
import { createMcpEndpoint } from '@mrtr/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../src/index.js';

let running: RunningServer;
let port: number;
beforeAll(async () => {
  running = await listen(createMcpEndpoint({ serverInfo: { name: 't', version: '1' }, tools: [] }));
  port = Number(new URL(running.url).port);
});
afterAll(() => running.close());

/** Send raw bytes; the status line and the body once the server closes the connection. */
function raw(request: string): Promise<{ status: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks).toString('utf8');
      resolve({ status: all.split('\r\n')[0] ?? '', body: all.slice(all.indexOf('\r\n\r\n') + 4) });
    });
  });
}

describe('listen: what Node would answer itself', () => {
  it.each([
    [
      'an unknown Expect',
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: foo\r\nContent-Length: 2\r\n\r\n{}`,
      417,
    ],
    ['CONNECT', 'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n', 405],
    ['no Host', 'POST /mcp HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}', 400],
  ])('%s gets %i with a JSON-RPC body', async (_what, request, status) => {
    const answer = await raw(request);
    expect(answer.status).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(JSON.parse(answer.body).error.code).toBe(-32600);
  });
});

describe('listenApp: the approval page on a request it cannot convert', () => {
  it('answers HTTP/1.0 without Host under /approve/ with 400, a reason and the page headers', async () => {
    const { createApprovalPage, MemoryApprovalStore } = await import('@mrtr/approval-page');
    const { listenApp } = await import('../src/index.js');
    const app = await listenApp((origin) => ({
      endpoint: createMcpEndpoint({ serverInfo: { name: 't', version: '1' }, tools: [] }),
      page: createApprovalPage({
        store: new MemoryApprovalStore(),
        origin,
        basePath: '/approve',
        signIn: { users: { alice: 'alice-page-password' } },
      }),
    }));
    try {
      const all = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(app.url).port), '127.0.0.1', () =>
          socket.write('GET /approve/sign-in HTTP/1.0\r\n\r\n'),
        );
        const chunks: Buffer[] = [];
        socket.setTimeout(5000, () => socket.destroy());
        socket.on('data', (c) => chunks.push(c));
        socket.on('error', reject);
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      });
      expect(all).toMatch(/^HTTP\/1\.[01] 400 /);
      expect(all.toLowerCase()).toContain("content-security-policy: default-src 'none'");
      expect(all.slice(all.indexOf('\r\n\r\n') + 4)).toMatch(/^Bad Request: /);
    } finally {
      await app.close();
    }
  });
});

describe('listenApp while it starts', () => {
  it('answers 503 with a JSON-RPC body and Retry-After until what it serves is built', async () => {
    const { listenApp } = await import('../src/index.js');
    let during:
      | { status: number; type: string | null; retry: string | null; body: unknown }
      | undefined;
    const app = await listenApp(async (origin) => {
      const res = await fetch(`${origin}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      const type = res.headers.get('content-type');
      during = {
        status: res.status,
        type,
        retry: res.headers.get('retry-after'),
        body: await res.json(),
      };
      return {
        endpoint: createMcpEndpoint({ serverInfo: { name: 't', version: '1' }, tools: [] }),
      };
    });
    await app.close();
    expect(during).toMatchObject({
      status: 503,
      type: 'application/json',
      retry: '1',
      body: { jsonrpc: '2.0', error: { code: -32603 } },
    });
  });
});
