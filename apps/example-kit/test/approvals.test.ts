/**
 * The example servers' approval page answers the hosts their endpoint
 * answers (the public origin's, a loopback name) and no other: a
 * DNS-rebinding name gets 403 before any route.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpEndpoint } from '@mrtr/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Database,
  exampleApprovals,
  listenApp,
  openDatabase,
  type RunningServer,
} from '../src/index.js';

let db: Database;
let running: RunningServer;
let port: number;
const PUBLIC = 'https://ops.example.com';
beforeAll(async () => {
  db = await openDatabase('memory://');
  running = await listenApp(
    async (origin) => ({
      endpoint: createMcpEndpoint({ serverInfo: { name: 't', version: '1' }, tools: [] }),
      page: (await exampleApprovals(db, origin, new Map([['tok-alice-0123456789', 'alice']]), 'T'))
        .page,
    }),
    { publicOrigin: PUBLIC },
  );
  port = (running.server.address() as AddressInfo).port;
}, 60_000);
afterAll(async () => {
  await running?.close();
  await db?.close();
});

/** GET `path` with `Host: host`; the status. */
function statusOf(host: string, path = '/approve/sign-in'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the example approval page and Host', () => {
  it('refuses a Host with userinfo before the page (400 from the request listener)', async () => {
    expect(await statusOf('localhost@evil.example')).toBe(400);
  });

  it.each([
    ['ops.example.com'],
    ['OPS.example.com:443'],
    ['127.0.0.1:%p'],
    ['localhost'],
    ['[::1]:8080'],
  ])('serves %s', async (host) => {
    expect(await statusOf(host.replace('%p', String(port)))).toBe(200);
  });

  it.each([
    ['evil.example'],
    ['ops.example.com:8443'],
    ['127.0.0.1.evil.example'],
    ['ops.example.com.'],
  ])('refuses %s with 403 on every route', async (host) => {
    expect(await statusOf(host)).toBe(403);
    expect(await statusOf(host, '/approve/AAAAAAAAAAAAAAAAAAAAAA')).toBe(403);
    expect(await statusOf(host, '/approve/assets/page.css')).toBe(403);
  });
});
