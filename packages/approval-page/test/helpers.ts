import { createHash } from 'node:crypto';
import type { PendingApproval } from '@mrtr/gate';
import { expect } from 'vitest';
import {
  type ApprovalStore,
  createApprovalChannel,
  createApprovalPage,
  MemoryApprovalStore,
  type PasskeyRegistration,
  SECURITY_HEADERS,
} from '../src/index.js';
import { approval } from './store-contract.js';

export const ORIGIN = 'http://127.0.0.1:4100';
export const USERS = { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789' };

/** A page, its channel and a controllable clock over one memory store. */
export function setup(
  options: {
    store?: ApprovalStore;
    origin?: string;
    passkeyRegistration?: PasskeyRegistration;
    attempts?: { limit?: number; windowSeconds?: number };
  } = {},
) {
  const clock = { now: Date.now() };
  const now = () => clock.now;
  const store = options.store ?? new MemoryApprovalStore({ now });
  const origin = options.origin ?? ORIGIN;
  const channel = createApprovalChannel({ store, origin, now });
  const errors: unknown[] = [];
  const page = createApprovalPage({
    store,
    origin,
    signIn: { users: USERS, ...(options.attempts ? { attempts: options.attempts } : {}) },
    serviceName: 'Test deleter',
    now,
    onError: (e) => errors.push(e),
    ...(options.passkeyRegistration ? { passkeyRegistration: options.passkeyRegistration } : {}),
  });
  /** Open an approval for `alice` and return it with its URL and path. */
  async function open(overrides: Partial<PendingApproval> = {}) {
    const a = approval({ expiresAt: clock.now + 300_000, ...overrides });
    const url = await channel.open(a);
    return { approval: a, url, path: new URL(url).pathname };
  }
  return { store, channel, page, clock, open, errors, origin };
}

/** A form POST as a browser on `origin` sends it. */
export function post(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return new Request(url, {
    method: 'POST',
    headers: {
      origin: new URL(url).origin,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Sign in through the built-in form; returns the `cookie` header value. */
export async function signIn(
  page: (r: Request) => Promise<Response>,
  principal: keyof typeof USERS,
  origin = ORIGIN,
): Promise<string> {
  const response = await page(
    post(`${origin}/approve/sign-in`, { principal, password: USERS[principal], return: '' }),
  );
  expect(response.status).toBe(200);
  const cookie = response.headers.get('set-cookie');
  if (!cookie) throw new Error('no session cookie');
  return cookie.split(';')[0] as string;
}

/** The CSRF token of the approval page's decision form. */
export async function csrfOf(page: (r: Request) => Promise<Response>, url: string, cookie: string) {
  const response = await page(new Request(url, { headers: { cookie } }));
  expect(response.status).toBe(200);
  const match = /name="csrf" value="([^"]+)"/.exec(await response.text());
  if (!match?.[1]) throw new Error('no csrf token on the page');
  return match[1];
}

/** Every header of {@link SECURITY_HEADERS} is on `response`. */
export function expectSecurityHeaders(response: Response) {
  for (const [name, value] of Object.entries(SECURITY_HEADERS))
    expect(response.headers.get(name), name).toBe(value);
}

/**
 * The store's key of the session a `cookie` header (`name=value`) of
 * {@link signIn} names: SHA-256 of the page's origin and base path, a NUL and the value.
 */
export function sessionKeyOf(cookie: string, origin = ORIGIN, basePath = '/approve'): string {
  return createHash('sha256')
    .update(`${origin}${basePath}\u0000${cookie.split('=')[1] as string}`)
    .digest('base64url');
}
