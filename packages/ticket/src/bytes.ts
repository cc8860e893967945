/**
 * Byte-level helpers of the sealer: random bytes from a pool, the canonical
 * base64url check, and a constant-time string comparison.
 */
import { randomBytes } from '@noble/ciphers/utils.js';

/**
 * Random bytes, each handed out once. Entropy is drawn from the CSPRNG
 * 4 KiB at a time (as Node's `randomUUID` caches it): one
 * `getRandomValues` call per ticket was a third of the cost of seal + open.
 */
const POOL_BYTES = 4096;
let pool = new Uint8Array(0);
let poolAt = 0;
export function fresh(n: number): Uint8Array {
  if (poolAt + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  const out = pool.slice(poolAt, poolAt + n);
  pool.fill(0, poolAt, poolAt + n);
  poolAt += n;
  return out;
}

/** The 6-bit value of a base64url character already checked against the alphabet. */
function sextet(c: number): number {
  if (c === 95) return 63; // _
  if (c === 45) return 62; // -
  if (c >= 97) return c - 71; // a-z
  if (c >= 65) return c - 65; // A-Z
  return c + 4; // 0-9
}

/** Unpadded base64url whose length is possible and whose unused low bits are zero (RFC 4648 §3.5). */
export function canonicalBase64url(text: string): boolean {
  const rem = text.length % 4;
  if (rem === 0) return true;
  if (rem === 1) return false;
  const unused = rem === 2 ? 0x0f : 0x03;
  return (sextet(text.charCodeAt(text.length - 1)) & unused) === 0;
}

/** Constant-time string equality: the sealed `sub` must not leak through timing. */
export function sameString(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
