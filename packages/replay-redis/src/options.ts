import type { RedisOptions } from 'ioredis';
import { REDIS_DURABILITIES, type RedisDurability } from './durability.js';

/** Options of {@link RedisReplayStore}. */
export interface RedisReplayStoreOptions {
  /** Prefix of every key the store writes (default `mrtr:replay:`); the nonce follows it. */
  keyPrefix?: string;
  /**
   * Longest wait for one Redis reply, milliseconds (default 2000). A claim
   * that gets no reply in time fails closed with
   * `ReplayStoreUnavailableError`.
   */
  timeoutMs?: number;
  /**
   * Shortest life of an unsettled claim, milliseconds (default 60 000). A
   * claim lives until `max(expiresAt, now + claimLeaseMs)`, so it cannot
   * expire while a slow action still runs; the action must finish within it.
   * A claim whose process died mid-action (or whose `SET` reached Redis only
   * after its release) blocks the nonce for that whole life, normally the
   * ticket's: Redis alone cannot tell whether the action ran, so identical
   * re-sends get `in_progress` until then rather than a second run. In front
   * of a ledger (`LedgerReplayStore` of `@mrtr/replay`), an outcome the
   * ledger committed is replayed instead.
   */
  claimLeaseMs?: number;
  /**
   * How durably the server must keep claims (see {@link RedisDurability}),
   * checked by `connect`, `checkDurability` and before the first claim:
   * `'aof-always'` (default), `'aof-everysec'`, or `'volatile'` to accept a
   * server that may forget claims, by name.
   */
  durability?: RedisDurability;
  /**
   * Replicas that must acknowledge each claim and each outcome (default 0).
   * After the write the store sends `WAITAOF 0 <replicas> <timeoutMs / 2>`
   * where every server has it (Redis ≥ 7.2) and durability is not
   * `'volatile'`, else `WAIT <replicas> <timeoutMs / 2>`. Fewer
   * acknowledgements: the claim is released and fails closed with
   * `ReplayStoreUnavailableError`; an outcome is kept on the primary and
   * reported to `onRecordError`.
   */
  replicas?: number;
  /** Clock, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /**
   * Called when the action ran but its outcome could not be recorded (Redis
   * did not answer, went away, or the claim outlived its lease) or was not
   * acknowledged by `replicas`. The result is still `performed`. An outcome
   * that got no reply is sent again until Redis answers it; until then
   * identical re-issues get `refused` / `in_progress`, never a second run.
   * Default: ignore.
   */
  onRecordError?: (error: unknown, nonce: string) => void;
}

/** The options with defaults applied, checked. */
export interface ResolvedOptions {
  prefix: string;
  timeoutMs: number;
  leaseMs: number;
  durability: RedisDurability;
  replicas: number;
  now: () => number;
  onRecordError: (error: unknown, nonce: string) => void;
}

/**
 * Options for a client the store creates itself: fail fast instead of
 * queueing commands while Redis is unreachable, and never resend a command
 * after a reconnect (a resent claim could land after the caller gave up).
 * Pass the same to an `ioredis` client you hand to the store.
 */
export const FAIL_FAST_REDIS_OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 2000,
  retryStrategy: (times: number) => Math.min(times * 100, 1000),
};

/**
 * Apply the defaults of {@link RedisReplayStoreOptions} and check them.
 * @throws {RangeError} when `timeoutMs` or `claimLeaseMs` is not a number of milliseconds from 1 to 2,147,483,647 (a longer timer fires at once; Node waits at least 1 ms), or `replicas` not a non-negative integer.
 * @throws {TypeError} when `durability` is not one of its names.
 */
export function resolveOptions(options: RedisReplayStoreOptions): ResolvedOptions {
  const durability = options.durability ?? 'aof-always';
  if (!REDIS_DURABILITIES.includes(durability))
    throw new TypeError(
      `durability must be one of ${REDIS_DURABILITIES.map((d) => `'${d}'`).join(', ')}; got ${JSON.stringify(durability)}`,
    );
  const replicas = options.replicas ?? 0;
  if (!(Number.isSafeInteger(replicas) && replicas >= 0))
    throw new RangeError('replicas must be a non-negative integer');
  return {
    prefix: options.keyPrefix ?? 'mrtr:replay:',
    timeoutMs: positive(options.timeoutMs ?? 2000, 'timeoutMs'),
    leaseMs: positive(options.claimLeaseMs ?? 60_000, 'claimLeaseMs'),
    durability,
    replicas,
    now: options.now ?? Date.now,
    onRecordError: options.onRecordError ?? (() => {}),
  };
}

function positive(value: number, name: string): number {
  // Node's timers wait at most 2^31 − 1 ms; a longer one fires at once.
  if (!(typeof value === 'number' && value >= 1 && value <= 2 ** 31 - 1))
    throw new RangeError(
      `${name} must be a number of milliseconds from 1 to 2147483647, got ${value}`,
    );
  return value;
}
