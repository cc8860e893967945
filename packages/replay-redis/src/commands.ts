import { createHash } from 'node:crypto';
import type { OnceResult } from '@mrtr/replay';
import type { RedisDurabilityReport } from './durability.js';
import type { ResolvedOptions } from './options.js';

/** One Redis command: its name, then its arguments. */
export type Command = readonly string[];

// A claim value is JSON: `{d, t}` while the action runs (t: this claim's unique
// token), `{d, o}` once its outcome `o` is recorded. d is the request digest.

const script = (lua: string) => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });

/** Replace the claim by the recorded outcome, only if it is still this claim. */
export const RECORD = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
  return 1
end
return 0`);

/**
 * Claim the key (`SET NX GET PXAT`), unless the request's `expiresAt`
 * (`ARGV[3]`) is at or before Redis's own clock: then `-1` and nothing is
 * set (contract, item 7). A `PXAT` in the past would set a key that is gone
 * at once, and the claim would look won: an instance whose clock runs
 * behind would act on a nonce whose record has expired.
 */
export const CLAIM = script(`local t = redis.call('TIME')
if tonumber(ARGV[3]) <= tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then
  return -1
end
return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'GET', 'PXAT', ARGV[2])`);

/** Delete the claim, only if it is still this claim. */
export const RELEASE = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`);

/**
 * `WAITAOF 0 <replicas> <ms>` where every server has it (Redis >= 7.2) and
 * durability is not `'volatile'` (replicas fsync the write to their AOF),
 * else `WAIT <replicas> <ms>` (replicas hold the write); `undefined` when no
 * replica must acknowledge. `ms` is half of `timeoutMs`, so the reply comes
 * before the store gives up waiting.
 */
export function waitCommand(
  o: Pick<ResolvedOptions, 'replicas' | 'timeoutMs' | 'durability'>,
  report: RedisDurabilityReport | undefined,
): Command | undefined {
  if (o.replicas === 0) return undefined;
  const ms = String(Math.max(1, Math.floor(o.timeoutMs / 2)));
  const n = String(o.replicas);
  const servers = report?.servers ?? [];
  const waitaof =
    o.durability !== 'volatile' && servers.length > 0 && servers.every((s) => s.waitaof);
  return waitaof ? ['WAITAOF', '0', n, ms] : ['WAIT', n, ms];
}

/** Why the reply to `wait` counts fewer replicas than it asked for, or `undefined` when enough. */
export function shortfall(wait: Command, reply: unknown): string | undefined {
  const waitaof = wait[0] === 'WAITAOF'; // WAITAOF numlocal numreplicas ms → [local, replicas]
  const asked = Number(waitaof ? wait[2] : wait[1]);
  const got = waitaof ? (Array.isArray(reply) ? Number(reply[1]) : Number.NaN) : Number(reply);
  if (got >= asked) return undefined;
  return `${wait[0]} counted ${got} of ${asked} replicas within ${waitaof ? wait[3] : wait[2]} ms`;
}

/** Whether `value` is a claim this store wrote whose outcome is not recorded yet (`{d, t}`, no `o`). */
export function isRunningClaim(value: string): boolean {
  let entry: unknown;
  try {
    entry = JSON.parse(value);
  } catch {
    return false;
  }
  return (
    typeof entry === 'object' &&
    entry !== null &&
    !Array.isArray(entry) &&
    typeof (entry as { t?: unknown }).t === 'string' &&
    !('o' in entry)
  );
}

/** What the value a nonce holds in Redis means for a claim with `requestDigest`. */
export function settled<T>(previous: unknown, requestDigest: string): OnceResult<T> {
  let entry: Partial<{ d: unknown; t: unknown; o: unknown }> | undefined;
  try {
    entry = typeof previous === 'string' ? JSON.parse(previous) : undefined;
  } catch {
    entry = undefined;
  }
  // A foreign or unreadable value under our key is treated as used: refuse, never run.
  if (typeof entry !== 'object' || entry === null || entry.d !== requestDigest)
    return { status: 'refused', reason: 'used' };
  if ('o' in entry) return { status: 'replayed', outcome: entry.o as T };
  return { status: 'refused', reason: 'in_progress' };
}
