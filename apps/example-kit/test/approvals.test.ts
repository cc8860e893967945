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
});
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

describe('the example approval page with page users', () => {
  const TOKEN = 'tok-alice-0123456789';
  const PASSWORD = 'page-alice-9876543210';
  let own: RunningServer;
  beforeAll(async () => {
    own = await listenApp(async (origin) => ({
      endpoint: createMcpEndpoint({ serverInfo: { name: 't', version: '1' }, tools: [] }),
      page: (
        await exampleApprovals(db, origin, new Map([[TOKEN, 'alice']]), 'T', {
          pageUsers: new Map([['alice', PASSWORD]]),
        })
      ).page,
    }));
  });
  afterAll(async () => {
    await own?.close();
  });

  /** POST the sign-in form as `principal` with `password`. */
  const signIn = (principal: string, password: string) =>
    fetch(`${own.origin}/approve/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: own.origin },
      body: new URLSearchParams({ principal, password }),
      redirect: 'manual',
    });

  it('refuses the bearer token (401) and signs in with the page password', async () => {
    const refused = await signIn('alice', TOKEN);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('set-cookie')).toBeNull();
    const signed = await signIn('alice', PASSWORD);
    expect(signed.status).toBe(200);
    expect(signed.headers.get('set-cookie')).toMatch(/^mrtr_approval_session=/);
  });

  it('refuses a page password that is a bearer token', async () => {
    await expect(
      exampleApprovals(db, 'http://127.0.0.1:1', new Map([[TOKEN, 'alice']]), 'T', {
        pageUsers: new Map([['alice', TOKEN]]),
      }),
    ).rejects.toThrow(/page password of "alice" is a bearer token/);
  });

  it('without page users, takes the bearer token as before', async () => {
    const fallback = await listenApp(async (origin) => ({
      endpoint: createMcpEndpoint({ serverInfo: { name: 't', version: '1' }, tools: [] }),
      page: (await exampleApprovals(db, origin, new Map([[TOKEN, 'alice']]), 'T')).page,
    }));
    try {
      const signed = await fetch(`${fallback.origin}/approve/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: fallback.origin },
        body: new URLSearchParams({ principal: 'alice', password: TOKEN }),
      });
      expect(signed.status).toBe(200);
    } finally {
      await fallback.close();
    }
  });
});
