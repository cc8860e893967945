import { randomBytes } from 'node:crypto';
import {
  assertOnceRequest,
  type Json,
  type OnceRequest,
  type OnceResult,
  type ReplayStore,
  ReplayStoreUnavailableError,
} from '@mrtr/replay';
import { type Cluster, Redis, type RedisOptions } from 'ioredis';
import {
  CLAIM,
  isRunningClaim,
  RECORD,
  RELEASE,
  settled,
  shortfall,
  waitCommand,
} from './commands.js';
import { Connection } from './connection.js';
import {
  durabilityProblems,
  RedisDurabilityError,
  type RedisDurabilityReport,
  RedisRefusedConnectionError,
  readDurability,
  serversOf,
} from './durability.js';
import {
  FAIL_FAST_REDIS_OPTIONS,
  type RedisReplayStoreOptions,
  type ResolvedOptions,
  resolveOptions,
} from './options.js';
import { PendingWrites } from './pending.js';
import {
  type DroppableClient,
  describeError,
  dropStalledHandshakes,
  withTimeout,
} from './timeout.js';

/** What a reply is, for an error message: its type and, for a number, its value; never a payload. */
function describeReply(reply: unknown): string {
  if (Array.isArray(reply)) return `an array of ${reply.length}`;
  if (typeof reply === 'number') return `the integer ${reply}`;
  return Buffer.isBuffer(reply) ? 'bytes' : `a ${typeof reply}`;
}

/**
 * The {@link ReplayStore} contract on Redis, shared by every server instance
 * that points at the same Redis.
 *
 * One claim is one atomic `SET key {digest, token} NX GET PXAT t`: it either
 * creates the claim with its expiry or returns what the nonce already holds
 * (Redis ≥ 7.0). After the action, a Lua script swaps the claim for
 * `{digest, outcome}` with `PXAT expiresAt`, only if the claim is still this
 * one. Redis forgets the key at `expiresAt` by itself: there is no `sweep`.
 *
 * Durability: a Redis that forgets a claim (restart without persistence,
 * eviction, failover to a replica that lacked it) lets an identical retry run
 * the mutation again. So the store requires what option `durability` names
 * (default `'aof-always'`: `appendonly yes`, `appendfsync always`, no
 * eviction; see `RedisDurability`), reads it with `INFO` and `CONFIG GET`
 * before the first claim and after every reconnect, and refuses a server that
 * falls short with {@link RedisDurabilityError} unless the operator names
 * `'volatile'`. With option `replicas`, every claim and outcome waits for
 * that many acknowledgements (`WAIT`, or `WAITAOF` on Redis ≥ 7.2).
 *
 * Faults fail closed: Redis that cannot be reached, or does not answer
 * within `timeoutMs`, makes `once` throw {@link ReplayStoreUnavailableError}
 * before the action runs. A claim that may have reached Redis anyway, or
 * whose release got no reply, is deleted (by its token) as soon as Redis
 * answers again, whatever the state of the connection: on any reply, on a
 * reconnect, and on a timer with backoff. An outcome that got no reply is
 * recorded the same way. A claim whose bytes reach Redis only after that
 * delete (held by a network path that later delivers them) stays until it
 * expires (see `claimLeaseMs`): it blocks the nonce, it never runs anything. The action itself cannot share a transaction with
 * Redis: keep it idempotent on the nonce.
 */
export class RedisReplayStore implements ReplayStore<void> {
  readonly #client: Redis | Cluster;
  readonly #c: Connection;
  #owned = false;
  readonly #o: ResolvedOptions;
  /** Tokens are this random prefix and a counter: unique per claim, without a random draw each. */
  readonly #tokenPrefix = randomBytes(9).toString('base64url');
  #tokens = 0;
  /** Releases and outcomes that got no reply, sent again until Redis answers. */
  readonly #pending: PendingWrites;
  /** The accepted durability check; cleared on reconnect so the next claim reads it again. */
  #durable: Promise<RedisDurabilityReport> | undefined;
  #report: RedisDurabilityReport | undefined;
  /** `#durable` has resolved: a claim need not wait a turn on it. */
  #durableSettled = false;
  /** Removes the handshake guard ({@link dropStalledHandshakes}) from the client. */
  readonly #unguard: () => void;
  readonly #onReady = () => {
    this.#durable = undefined; // a reconnect may have reached a restarted or other server
    this.#durableSettled = false;
    this.#pending.nudge();
  };

  /**
   * Use an existing `ioredis` client (standalone or `Cluster`); the store
   * does not close it. Give it {@link FAIL_FAST_REDIS_OPTIONS}, or commands
   * wait in its offline queue until `timeoutMs` while Redis is down. The
   * server's durability is checked before the first claim (or call
   * {@link checkDurability} at start to fail early).
   * @throws {RangeError} when `timeoutMs` or `claimLeaseMs` is not a positive number, or `replicas` not a non-negative integer.
   * @throws {TypeError} when `durability` is not one of its names.
   */
  constructor(client: Redis | Cluster, options: RedisReplayStoreOptions = {}) {
    this.#o = resolveOptions(options);
    this.#client = client;
    this.#pending = new PendingWrites(
      ([name, ...args]) => client.call(name as string, ...args),
      this.#o.now,
    );
    this.#c = new Connection(client, this.#o.timeoutMs, () => this.#pending.nudge());
    this.#client.on('ready', this.#onReady);
    this.#unguard = client.isCluster
      ? () => {}
      : dropStalledHandshakes(client as Redis & DroppableClient, this.#o.timeoutMs);
  }

  /**
   * Connect to the Redis at `url` (`redis://[user:password@]host:port[/db]`
   * or `rediss://…`) with {@link FAIL_FAST_REDIS_OPTIONS}, check its
   * durability, and return a store that owns the client (`close()` quits it).
   * @param options.redis extra `ioredis` options, applied over the fail-fast ones.
   * @throws {ReplayStoreUnavailableError} when Redis cannot be reached within `connectTimeout`.
   * @throws {RedisRefusedConnectionError} when Redis refuses the connection (its reply, e.g.
   *   `WRONGPASS` or `NOAUTH`, is the message and the `cause`).
   * @throws {RedisDurabilityError} when the server keeps claims less durably than `options.durability`.
   */
  static async connect(
    url: string,
    options: RedisReplayStoreOptions & { redis?: RedisOptions } = {},
  ): Promise<RedisReplayStore> {
    resolveOptions(options); // bad options throw before any connection is made
    const client = new Redis(url, {
      ...FAIL_FAST_REDIS_OPTIONS,
      ...options.redis,
      lazyConnect: true,
    });
    // Errors reach callers through rejected commands; without a listener ioredis prints each reconnect failure.
    // The last one is kept while connecting: a refused AUTH only shows there ("Connection is closed" after it).
    let refusal: Error | undefined;
    const keep = (error: unknown) => {
      if (error instanceof Error && error.name === 'ReplyError') refusal = error;
    };
    client.on('error', keep);
    // A server that accepts and never answers the handshake must not hold the start for good.
    const unguard = dropStalledHandshakes(
      client as Redis & DroppableClient,
      resolveOptions(options).timeoutMs,
    );
    try {
      await client.connect();
    } catch (error) {
      client.disconnect();
      if (refusal) throw new RedisRefusedConnectionError(refusal);
      throw new ReplayStoreUnavailableError(
        `Redis replay store unreachable: ${describeError(error)}`,
        { cause: error },
      );
    } finally {
      client.off('error', keep);
      unguard();
    }
    client.on('error', () => {});
    const store = new RedisReplayStore(client, options);
    store.#owned = true;
    try {
      await store.#ensureDurable();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** The `ioredis` client (for health checks and tests). */
  get client(): Redis | Cluster {
    return this.#client;
  }

  /**
   * Read the server's persistence (`INFO server persistence memory
   * replication`, `CONFIG GET appendfsync`, `COMMAND INFO WAITAOF`; every
   * primary of a `Cluster`) and check it against option `durability`.
   * @returns what was read, when it is durable enough.
   * @throws {RedisDurabilityError} naming each setting that falls short and the opt-in.
   * @throws {ReplayStoreUnavailableError} when Redis does not answer within `timeoutMs`.
   */
  async checkDurability(): Promise<RedisDurabilityReport> {
    if (this.#c.unsettled) await this.#c.settle();
    const servers = await Promise.all(
      serversOf(this.#client).map((node) =>
        // The store's own connection, stalled, is dropped as a claim's would be; a cluster's nodes are the cluster's.
        readDurability(
          node,
          this.#o.timeoutMs,
          node === this.#client ? this.#c.dropStalled : undefined,
        ),
      ),
    );
    const report = { durability: this.#o.durability, replicas: this.#o.replicas, servers };
    const problems = servers.flatMap((s) =>
      durabilityProblems(s, this.#o.durability, this.#o.replicas),
    );
    if (problems.length > 0) throw new RedisDurabilityError(problems, report);
    this.#report = report;
    return report;
  }

  /**
   * See {@link ReplayStore.once}; the action receives nothing.
   * @throws {TypeError} for a malformed request (nothing sent), or an outcome that is not JSON (the claim stays until it expires).
   * @throws {RedisDurabilityError} when the server is not durable enough (nothing sent, the action did not run).
   * @throws {ReplayStoreUnavailableError} when Redis, or `replicas` of its replicas, do not take the claim; the action did not run.
   * @throws what `action` throws, after deleting the claim.
   */
  async once<T extends Json>(
    request: OnceRequest,
    action: (tx: undefined) => Promise<T>,
  ): Promise<OnceResult<T>> {
    assertOnceRequest(request);
    // After a reconnect, 'ready' drops the earlier check: read the settings of this connection.
    if (this.#c.unsettled) await this.#c.settle();
    if (!this.#durableSettled) await this.#ensureDurable();
    const key = this.#o.prefix + request.nonce;
    const token = `${this.#tokenPrefix}.${(this.#tokens++).toString(36)}`;
    const digest = JSON.stringify(request.requestDigest);
    const held = `{"d":${digest},"t":"${token}"}`;
    // PXAT takes whole milliseconds above 0: rounded up, so no entry is forgotten before its expiresAt.
    const until = Math.ceil(Math.max(request.expiresAt, this.#o.now() + this.#o.leaseMs));
    const wait = waitCommand(this.#o, this.#report);
    let previous: unknown;
    let acks: unknown;
    try {
      [previous, acks] = await this.#c.script(
        CLAIM,
        key,
        [held, String(until), String(Math.ceil(request.expiresAt))],
        wait,
      );
    } catch (error) {
      // The SET may have reached Redis before the failure: delete it when Redis answers.
      this.#pending.add(token, ['EVAL', RELEASE.lua, '1', key, held], until);
      throw new ReplayStoreUnavailableError(
        `Redis replay store unavailable; the operation did not run: ${describeError(error)}`,
        { cause: error },
      );
    }
    if (typeof previous === 'string') return settled(previous, request.requestDigest);
    if (previous === -1) return { status: 'refused', reason: 'expired' };
    if (previous !== null) {
      // `SET … GET` answers a string or nil: anything else is no answer about this key (a proxy
      // or a client library out of step). The SET may have been applied: delete it when Redis answers.
      this.#pending.add(token, ['EVAL', RELEASE.lua, '1', key, held], until);
      throw new ReplayStoreUnavailableError(
        `Redis replay store: the claim got a reply that is neither a value nor nil (${describeReply(previous)}); the operation did not run`,
      );
    }
    const short = wait && shortfall(wait, acks);
    if (short) {
      await this.#release(token, key, held, until);
      throw new ReplayStoreUnavailableError(
        `Redis replay store: the claim was not kept by enough replicas (${short}); the operation did not run`,
      );
    }

    let outcome: T;
    try {
      outcome = await action(undefined);
    } catch (error) {
      await this.#release(token, key, held, until);
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
    const record = [held, done, String(Math.max(1, Math.ceil(request.expiresAt)))];
    try {
      const [swapped, recordAcks] = await this.#c.script(RECORD, key, record, wait);
      if (swapped !== 1)
        this.#o.onRecordError(
          new Error('the claim ended before its outcome was recorded'),
          request.nonce,
        );
      else {
        const short = wait && shortfall(wait, recordAcks);
        if (short)
          this.#o.onRecordError(
            new Error(`the outcome was not kept by enough replicas (${short})`),
            request.nonce,
          );
      }
    } catch (error) {
      // The action ran: report it as performed; the claim blocks a second run, and the
      // outcome is sent again until Redis answers, so identical retries then get `replayed`.
      this.#pending.add(token, ['EVAL', RECORD.lua, '1', key, ...record], until);
      this.#o.onRecordError(error, request.nonce);
    }
    return { status: 'performed', outcome };
  }

  /**
   * See {@link ReplayStore.recorded}: one `GET` of the nonce's key, no claim,
   * no lock, no wait. `replayed` with the outcome for an identical request
   * and `refused` / `used` for another `requestDigest`, once an outcome is
   * recorded; `undefined` for no key, or a claim whose action still runs (or
   * whose outcome never reached Redis). A value the store did not write is
   * `used`, as `once` reads it. The gate asks this before it puts a
   * question again with a ticket, so that a spent ticket is told so on
   * every instance.
   * @throws {TypeError} for a malformed request (nothing sent).
   * @throws {ReplayStoreUnavailableError} when Redis does not answer within `timeoutMs`, or answers neither a value nor nil.
   */
  async recorded<T extends Json>(request: OnceRequest): Promise<OnceResult<T> | undefined> {
    assertOnceRequest(request);
    if (this.#c.unsettled) await this.#c.settle();
    let value: unknown;
    try {
      [value] = await this.#c.exec(['GET', this.#o.prefix + request.nonce]);
    } catch (error) {
      throw new ReplayStoreUnavailableError(
        `Redis replay store unavailable: ${describeError(error)}`,
        { cause: error },
      );
    }
    if (value === null) return undefined;
    if (typeof value !== 'string')
      throw new ReplayStoreUnavailableError(
        `Redis replay store: the read got a reply that is neither a value nor nil (${describeReply(value)})`,
      );
    // A claim whose action runs holds the nonce but has recorded nothing yet, whoever asks.
    if (isRunningClaim(value)) return undefined;
    const result = settled<T>(value, request.requestDigest);
    // Anything else without an outcome is no entry of this store's: spent, as `once` would never run it.
    return result.status === 'refused' ? { status: 'refused', reason: 'used' } : result;
  }

  /** Stop listening to the client and retrying, and quit the client when the store created it. Idempotent. */
  async close(): Promise<void> {
    this.#client.off('ready', this.#onReady);
    this.#unguard();
    this.#pending.close();
    if (!this.#owned || this.#client.status === 'end') return;
    // QUIT waits for a reply that a stalled Redis never sends: give up after timeoutMs.
    await withTimeout(this.#client.quit(), this.#o.timeoutMs).catch(() =>
      this.#client.disconnect(),
    );
  }

  /** The durability check of this connection, read once and shared by concurrent claims; a failure is not kept. */
  #ensureDurable(): Promise<RedisDurabilityReport> {
    if (!this.#durable) {
      const check = this.checkDurability();
      this.#durable = check;
      check.then(
        () => {
          if (this.#durable === check) this.#durableSettled = true;
        },
        () => {
          if (this.#durable === check) this.#durable = undefined;
        },
      );
    }
    return this.#durable;
  }

  /** Delete this call's claim now, or when Redis next answers. */
  async #release(token: string, key: string, held: string, until: number): Promise<void> {
    try {
      await this.#c.script(RELEASE, key, [held]);
    } catch {
      this.#pending.add(token, ['EVAL', RELEASE.lua, '1', key, held], until);
    }
  }
}
