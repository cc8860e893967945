import { randomUUID } from 'node:crypto';
import type { OnceRequest } from '@mrtr/replay';
import { Redis } from 'ioredis';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A claim with a fresh nonce, 5 minutes to live. */
export function onceRequest(overrides: Partial<OnceRequest> = {}): OnceRequest {
  return {
    nonce: randomUUID(),
    requestDigest: 'sha256:answer-a',
    expiresAt: Date.now() + 300_000,
    ...overrides,
  };
}

/** Poll `check` until it returns true or `ms` pass (a bound for a loaded machine, not a speed claim). */
export async function eventually(check: () => Promise<boolean>, ms = 15_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return true;
    await sleep(50);
  }
  return check();
}

/** A plain client for looking at what a store wrote; it retries while a fault test restarts Redis. */
export function looker(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  client.on('error', () => {});
  return client;
}
