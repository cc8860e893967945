import { expect } from 'vitest';
import type { Answer } from './http.js';

/** The answer is a JSON-RPC error with `code` (one of them, when a middleware decides) and a non-5xx status. */
export function refused(answer: Answer, codes: number | number[], status?: number): void {
  expect(answer.contentType).toMatch(/^application\/json/);
  expect(answer.json?.jsonrpc).toBe('2.0');
  expect([codes].flat()).toContain(answer.json?.error?.code);
  if (status !== undefined) expect(answer.status).toBe(status);
  else expect(answer.status).toBeLessThan(500);
}

/** The answer is the internal error: HTTP 500 with a JSON-RPC body that tells nothing. */
export function internal(answer: Answer): void {
  expect([answer.status, answer.contentType.split(';')[0]]).toEqual([500, 'application/json']);
  expect(answer.json.error).toEqual({ code: -32603, message: 'Internal error' });
}
