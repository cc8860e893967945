import { createHash, randomBytes } from 'node:crypto';
import {
  assertClaimRequest,
  type ClaimRequest,
  type Json,
  type OnceResult,
  type ReplayStore,
  ReplayStoreUnavailableError,
} from '@mrtr/replay';
import { type Cluster, Redis, type RedisOptions } from 'ioredis';

/** Options of {@link RedisReplayStore}. */
export interface RedisReplayStoreOptions {
  /** Prefix of every key the store writes (default `mrtr:replay:`); the nonce follows it. */
  keyPrefix?: string;
  /**
   * Longest wait for one Redis reply, milliseconds (default 2000). A claim
   * that gets no reply in time fails closed with
   * {@link ReplayStoreUnavailableError}.
   */
  timeoutMs?: number;
  /**
   * Shortest life of an unsettled claim, milliseconds (default 60 000). A
   * claim lives until `max(expiresAt, now + claimLeaseMs)`, so it cannot
   * expire while a slow action still runs; the action must finish within it.
   * It also bounds how long a process that died mid-action blocks the nonce.
   */
  claimLeaseMs?: number;
  /** Clock, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /**
   * Called when the action ran but its outcome could not be recorded (Redis
   * went away, or the claim outlived its lease). The result is still
   * `performed`; identical re-issues then get `refused` / `in_progress`
   * until the claim expires, never a second run. Default: ignore.
   */
  onRecordError?: (error: unknown, nonce: string) => void;
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

// A claim value is JSON: `{d, t}` while the action runs (t: this claim's unique
// token), `{d, o}` once its outcome `o` is recorded. d is the request digest.

const script = (lua: string) => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });

/** Replace the claim by the recorded outcome, only if it is still this claim. */
const RECORD = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
  return 1
end
return 0`);

/** Delete the claim, only if it is still this claim. */
const RELEASE = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`);

/** Most claims remembered for deletion while Redis is away. */
const MAX_ORPHANS = 10_000;

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The {@link ReplayStore} contract on Redis, shared by every server instance
 * that points at the same Redis.
 *
 * One claim is one atomic `SET key {digest, token} NX GET PXAT t`: it either
 * creates the claim with its expiry or returns what the nonce already holds
 * (claim and read of the recorded outcome in one step, Redis ≥ 7.0). After
 * the action, a Lua script swaps the claim for `{digest, outcome}` with
 * `PXAT expiresAt`, only if the claim is still this one. Redis forgets the
 * key at `expiresAt` by itself, so there is no `sweep`.
 *
 * An identical presentation while the action runs is refused as
 * `in_progress` at once. Redis that cannot be reached, or does not answer
 * within `timeoutMs`, makes `once` throw {@link ReplayStoreUnavailableError}
 * before the action runs; a claim that may have reached Redis anyway is
 * deleted as soon as Redis answers again (it is this call's, by its token),
 * so nothing stays half-claimed. The action itself cannot share a
 * transaction with Redis: keep it idempotent on the nonce.
 */
export class RedisReplayStore implements ReplayStore<void> {
  readonly #client: Redis | Cluster;
  #owned: boolean;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #leaseMs: number;
  readonly #now: () => number;
  readonly #onRecordError: (error: unknown, nonce: string) => void;
  /** Tokens are this random prefix and a counter: unique per claim, without a random draw each. */
  readonly #tokenPrefix = randomBytes(9).toString('base64url');
  #tokens = 0;
  /** Claims to delete once Redis answers again: key → claim value. */
  readonly #orphans = new Map<string, string>();
  readonly #onReady = () => this.#releaseOrphans();

  /**
   * Use an existing `ioredis` client (standalone or `Cluster`); the store
   * does not close it. Give it {@link FAIL_FAST_REDIS_OPTIONS}, or commands
   * wait in its offline queue until `timeoutMs` while Redis is down.
   * @throws {RangeError} when `timeoutMs` or `claimLeaseMs` is not a positive number.
   */
  constructor(client: Redis | Cluster, options: RedisReplayStoreOptions = {}) {
    this.#client = client;
    this.#owned = false;
    this.#prefix = options.keyPrefix ?? 'mrtr:replay:';
    this.#timeoutMs = positive(options.timeoutMs ?? 2000, 'timeoutMs');
    this.#leaseMs = positive(options.claimLeaseMs ?? 60_000, 'claimLeaseMs');
    this.#now = options.now ?? Date.now;
    this.#onRecordError = options.onRecordError ?? (() => {});
    this.#client.on('ready', this.#onReady);
  }

  /**
   * Connect to the Redis at `url` (`redis://[user:password@]host:port[/db]`
   * or `rediss://…`) with {@link FAIL_FAST_REDIS_OPTIONS} and return a store
   * that owns the client (`close()` quits it).
   * @param options.redis extra `ioredis` options, applied over the fail-fast ones.
   * @throws {ReplayStoreUnavailableError} when Redis cannot be reached within `connectTimeout`.
   */
  static async connect(
    url: string,
    options: RedisReplayStoreOptions & { redis?: RedisOptions } = {},
  ): Promise<RedisReplayStore> {
    const client = new Redis(url, {
      ...FAIL_FAST_REDIS_OPTIONS,
      ...options.redis,
      lazyConnect: true,
    });
    // Errors reach callers through rejected commands; without a listener ioredis prints each reconnect failure.
    client.on('error', () => {});
    try {
      await client.connect();
    } catch (error) {
      client.disconnect();
      throw new ReplayStoreUnavailableError(
        `Redis replay store unreachable: ${describeError(error)}`,
        { cause: error },
      );
    }
    const store = new RedisReplayStore(client, options);
    store.#owned = true;
    return store;
  }

  /** The `ioredis` client (for health checks and tests). */
  get client(): Redis | Cluster {
    return this.#client;
  }

  /**
   * See {@link ReplayStore.once}; the action receives nothing.
   * @throws {TypeError} for a malformed claim (nothing sent), or an outcome that is not JSON (the claim stays until it expires).
   * @throws {ReplayStoreUnavailableError} when Redis does not take the claim; the action did not run.
   * @throws what `action` throws, after deleting the claim.
   */
  async once<T extends Json>(
    claim: ClaimRequest,
    action: (tx: undefined) => Promise<T>,
  ): Promise<OnceResult<T>> {
    assertClaimRequest(claim);
    const key = this.#prefix + claim.nonce;
    const token = `${this.#tokenPrefix}.${(this.#tokens++).toString(36)}`;
    const digest = JSON.stringify(claim.requestDigest);
    const held = `{"d":${digest},"t":"${token}"}`;
    const until = Math.max(claim.expiresAt, this.#now() + this.#leaseMs);
    let previous: unknown;
    try {
      previous = await this.#call('SET', key, held, 'NX', 'GET', 'PXAT', String(until));
    } catch (error) {
      // The SET may have reached Redis before the failure: delete it when Redis answers.
      this.#orphan(key, held);
      throw new ReplayStoreUnavailableError(
        `Redis replay store unavailable; the operation did not run: ${describeError(error)}`,
        { cause: error },
      );
    }
    if (previous !== null) return settled(previous, claim.requestDigest);

    let outcome: T;
    try {
      outcome = await action(undefined);
    } catch (error) {
      await this.#script(RELEASE, key, held).catch(() => this.#orphan(key, held));
      throw error;
    }
    let text: string | undefined;
    try {
      text = JSON.stringify(outcome);
    } catch {
      text = undefined; // BigInt or a cycle
    }
    // The action ran, so the claim stays (until it expires); there is just no outcome to record.
    if (text === undefined) throw new TypeError('the action must return a JSON value');
    const done = `{"d":${digest},"o":${text}}`;
    try {
      const swapped = await this.#script(RECORD, key, held, done, String(claim.expiresAt));
      if (swapped !== 1)
        this.#onRecordError(
          new Error('the claim ended before its outcome was recorded'),
          claim.nonce,
        );
    } catch (error) {
      // The action ran: report it as performed; the claim keeps blocking a second run until it expires.
      this.#onRecordError(error, claim.nonce);
    }
    return { status: 'performed', outcome };
  }

  /** Stop listening to the client, and quit it when the store created it. Idempotent. */
  async close(): Promise<void> {
    this.#client.off('ready', this.#onReady);
    if (!this.#owned || this.#client.status === 'end') return;
    // QUIT waits for a reply that a stalled Redis never sends: give up after timeoutMs.
    await withTimeout(this.#client.quit(), this.#timeoutMs).catch(() => this.#client.disconnect());
  }

  async #call(command: string, ...args: string[]): Promise<unknown> {
    if (this.#client.status !== 'ready') await this.#firstConnection();
    return withTimeout(this.#client.call(command, ...args), this.#timeoutMs);
  }

  /**
   * A client still making its first connection gets up to `timeoutMs` to
   * finish it; one that lost its connection fails at once (Redis is down).
   */
  async #firstConnection(): Promise<void> {
    const client = this.#client;
    if (client.status === 'wait') client.connect().catch(() => {});
    if (client.status !== 'connecting' && client.status !== 'connect') return;
    await withTimeout(
      new Promise<void>((resolve) => client.once('ready', () => resolve())),
      this.#timeoutMs,
    ).catch(() => {});
  }

  async #script(s: { lua: string; sha: string }, key: string, ...args: string[]): Promise<unknown> {
    try {
      return await this.#call('EVALSHA', s.sha, '1', key, ...args);
    } catch (error) {
      if (!describeError(error).startsWith('NOSCRIPT')) throw error;
      return this.#call('EVAL', s.lua, '1', key, ...args);
    }
  }

  #orphan(key: string, held: string): void {
    // Bounded: an orphan not released in time still expires with its PXAT.
    if (this.#orphans.size >= MAX_ORPHANS)
      this.#orphans.delete(this.#orphans.keys().next().value as string);
    this.#orphans.set(key, held);
    this.#releaseOrphans();
  }

  #releaseOrphans(): void {
    for (const [key, held] of this.#orphans) {
      // Commands keep their order on one connection, so this runs after a late SET.
      this.#script(RELEASE, key, held).then(
        () => {
          if (this.#orphans.get(key) === held) this.#orphans.delete(key);
        },
        () => {}, // still unreachable: retried on the next 'ready'
      );
    }
  }
}

function settled<T>(previous: unknown, requestDigest: string): OnceResult<T> {
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

function positive(value: number, name: string): number {
  if (!(typeof value === 'number' && value > 0 && Number.isFinite(value)))
    throw new RangeError(`${name} must be a positive number of milliseconds`);
  return value;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reply from Redis within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
