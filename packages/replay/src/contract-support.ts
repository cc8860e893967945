/**
 * What the tests of the `ReplayStore` contract suite share: requests with
 * fresh nonces, counting actions, outcomes of every JSON shape, and waiting.
 */
import { randomUUID } from 'node:crypto';
import type { Json, OnceRequest } from './contract.js';

/** Milliseconds an expiry test lets an entry live. */
export const SHORT_LIFE_MS = 400;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A request with a fresh nonce, alive for five minutes unless told otherwise. */
export function freshRequest(overrides: Partial<OnceRequest> = {}): OnceRequest {
  return {
    nonce: `contract-${randomUUID()}`,
    requestDigest: 'sha256:answer-a',
    expiresAt: Date.now() + 300_000,
    ...overrides,
  };
}

/** An action that counts its runs, optionally waits, and returns `outcome`. */
export function counted<T extends Json>(outcome: T, waitMs = 0) {
  const calls = { count: 0 };
  const action = async (): Promise<T> => {
    calls.count++;
    if (waitMs > 0) await sleep(waitMs);
    return outcome;
  };
  return { calls, action };
}

/** Outcomes of every JSON shape, including the falsy ones a store could confuse with "no outcome yet". */
export const OUTCOMES: Json[] = [
  { content: [{ type: 'text', text: 'Deleted note-1 “Meeting notes” ✓' }], isError: false },
  { nested: { list: [1, -2.5, 'two', null, true, { deep: [] }] } },
  null,
  0,
  false,
  '',
  [],
  {},
  Number.MAX_SAFE_INTEGER,
  'done',
];
