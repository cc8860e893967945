import type { PendingApproval } from '@mrtr/gate';
import { assertChallengeRequest, judgeChallenge } from './passkey-rules.js';
import type {
  ChallengeRequest,
  PasskeyCredential,
  PasskeyStore,
  RegistrationChallenge,
} from './passkey-store.js';
import { RedisPasskeyRecords } from './redis-passkeys.js';
import {
  assertDecideRequest,
  assertPendingApproval,
  assertSession,
  judge,
  pendingApproval,
  refusal,
  sameApproval,
} from './rules.js';
import {
  type ApprovalStore,
  ApprovalStoreUnavailableError,
  type ChallengeResult,
  type DecideRequest,
  type DecideResult,
  type SessionRecord,
  type StoredApproval,
} from './store.js';

/**
 * What the Redis store uses of a client: one raw command. An `ioredis`
 * client (`Redis` or `Cluster`) has it as `call`; create it with
 * `enableOfflineQueue: false` and `maxRetriesPerRequest: 0` so that an
 * unreachable Redis fails at once instead of queueing.
 */
export interface RedisCommander {
  call(command: string, ...args: string[]): Promise<unknown>;
  /** `ioredis`'s connection state (`'ready'`, …). */
  readonly status?: string;
  /** `ioredis`'s socket: destroyed when a reply went past `timeoutMs`, where that is safe (see {@link RedisApprovalStore}). */
  readonly stream?: { destroy(): void };
  /** `ioredis`'s options: whether a reconnect resends commands, and reconnects at all. */
  readonly options?: { autoResendUnfulfilledCommands?: boolean; retryStrategy?: unknown };
  /** `ioredis`'s status events: a handshake that outlives `timeoutMs` is dropped (see {@link RedisApprovalStore}). */
  on?(event: 'connect' | 'ready' | 'close' | 'end', listener: () => void): unknown;
  /** `true` on an ioredis `Cluster`, which has no one connection to drop. */
  readonly isCluster?: boolean;
}

/** Options of {@link RedisApprovalStore}. */
export interface RedisApprovalStoreOptions {
  /**
   * Prefix of every key (default `mrtr:approval:`); `a:<id>` (approvals),
   * `s:<session key>` (sessions), `k:<credential id>` and `p:<principal>`
   * (passkeys) and `r:<key>` (registrations) follow it.
   */
  keyPrefix?: string;
  /** Longest wait for one Redis reply, milliseconds (default 2000); then {@link ApprovalStoreUnavailableError}. */
  timeoutMs?: number;
  /** Clock, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
}

/** How often a compare-and-set lost to a concurrent change is tried again before giving up. */
const CAS_TRIES = 4;

/** Replace the value only if it is still the one read: the first decision wins. */
const COMPARE_AND_SET = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0`;

/**
 * The {@link ApprovalStore} on Redis (≥ 6.2), shared by every instance on
 * the same Redis. An approval is one key holding `{approval, decision}` as
 * JSON with `PXAT expiresAt`, so Redis forgets it when its ticket dies
 * (`sweep` has nothing to do); sessions and registrations likewise. Opening
 * is `SET … NX PXAT`; deciding (and keeping a passkey challenge) reads,
 * applies the rule, then swaps the value with a compare-and-set script, so
 * of concurrent decisions exactly one is recorded, and a passkey decision
 * only while the challenge it verified is still the pending one. Redis that fails or does not answer within `timeoutMs` throws
 * {@link ApprovalStoreUnavailableError}; a write whose reply was lost may
 * still land, which the next read shows. A connection that let a reply go
 * past `timeoutMs` is dropped, so the client connects again instead of
 * failing every later command behind the lost reply: on a client made with
 * `autoResendUnfulfilledCommands: false` and a `retryStrategy` (with that
 * resend on, another user's command whose reply was only slow would run twice
 * after the reconnect; without a strategy the client would end for good).
 */
export class RedisApprovalStore implements ApprovalStore {
  readonly #client: RedisCommander;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #passkeys: RedisPasskeyRecords;

  /**
   * @param client an `ioredis` client (the store does not close it).
   * @throws {RangeError} when `timeoutMs` is not a number of milliseconds from 1 to
   *   2,147,483,647 (a longer timer fires at once).
   */
  constructor(client: RedisCommander, options: RedisApprovalStoreOptions = {}) {
    this.#client = client;
    this.#prefix = options.keyPrefix ?? 'mrtr:approval:';
    this.#timeoutMs = options.timeoutMs ?? 2000;
    if (!(this.#timeoutMs >= 1 && this.#timeoutMs <= 2 ** 31 - 1))
      throw new RangeError(
        `timeoutMs must be a number of milliseconds from 1 to 2147483647, got ${this.#timeoutMs}`,
      );
    guardHandshakes(client, this.#timeoutMs);
    this.#now = options.now ?? Date.now;
    this.#passkeys = new RedisPasskeyRecords(
      (command, ...args) => this.#call(command, ...args),
      this.#prefix,
      this.#now,
    );
  }

  /** See {@link ApprovalStore.open}. */
  async open(approval: PendingApproval): Promise<void> {
    assertPendingApproval(approval, this.#now());
    const row = pendingApproval(approval);
    const value = JSON.stringify({ approval: row, decision: null, challenge: null });
    const set = await this.#call('SET', this.#key(row.id), value, 'NX', 'PXAT', `${row.expiresAt}`);
    if (set === 'OK') return;
    const existing = await this.get(row.id);
    if (existing && sameApproval(existing.approval, row)) return;
    throw new TypeError('approval id already opened with another approval');
  }

  /** See {@link ApprovalStore.get}. Redis forgets an approval at its `expiresAt`. */
  async get(id: string): Promise<StoredApproval | undefined> {
    return (await this.#read(id))?.stored;
  }

  /** See {@link ApprovalStore.decide}. */
  async decide(request: DecideRequest): Promise<DecideResult> {
    assertDecideRequest(request);
    const now = this.#now();
    for (let tries = 0; tries < CAS_TRIES; tries++) {
      const before = await this.#read(request.id);
      const verdict = judge(before?.stored, request, now);
      if ('refused' in verdict) return refusal(verdict);
      const { approval } = before?.stored as StoredApproval;
      const next = JSON.stringify({ approval, decision: verdict.record, challenge: null });
      if (await this.#swap(request.id, before?.raw ?? '', next))
        return { status: 'recorded', decision: verdict.record };
    }
    return { status: 'refused', reason: 'decided' };
  }

  /** See {@link ApprovalStore.setChallenge}. */
  async setChallenge(request: ChallengeRequest): Promise<ChallengeResult> {
    assertChallengeRequest(request);
    const now = this.#now();
    for (let tries = 0; tries < CAS_TRIES; tries++) {
      const before = await this.#read(request.id);
      const verdict = judgeChallenge(before?.stored, request, now);
      if ('refused' in verdict) return { status: 'refused', reason: verdict.refused };
      const { approval } = before?.stored as StoredApproval;
      const next = JSON.stringify({ approval, decision: null, challenge: verdict.keep });
      if (await this.#swap(request.id, before?.raw ?? '', next))
        return { status: 'set', challenge: verdict.keep };
    }
    return { status: 'refused', reason: 'decided' };
  }

  /** Nothing to do: Redis expires approvals and sessions itself. @returns 0. */
  async sweep(): Promise<number> {
    return 0;
  }

  /** See {@link SessionStore.createSession}. */
  async createSession(key: string, session: SessionRecord): Promise<void> {
    assertSession(key, session);
    const { principal, csrfSecret, expiresAt } = session;
    const value = JSON.stringify({ principal, csrfSecret, expiresAt });
    await this.#call('SET', `${this.#prefix}s:${key}`, value, 'PXAT', `${expiresAt}`);
  }

  /** See {@link SessionStore.readSession}. */
  async readSession(key: string): Promise<SessionRecord | undefined> {
    assertSession(key);
    const raw = await this.#call('GET', `${this.#prefix}s:${key}`);
    if (typeof raw !== 'string') return undefined;
    const session = this.#parse<SessionRecord>(raw);
    return session.expiresAt > this.#now() ? session : undefined;
  }

  /** See {@link SessionStore.deleteSession}. */
  async deleteSession(key: string): Promise<void> {
    assertSession(key);
    await this.#call('DEL', `${this.#prefix}s:${key}`);
  }

  /** See {@link PasskeyStore.addCredential}. */
  addCredential(credential: PasskeyCredential): Promise<boolean> {
    return this.#passkeys.addCredential(credential);
  }
  /** See {@link PasskeyStore.getCredential}. */
  getCredential(id: string): Promise<PasskeyCredential | undefined> {
    return this.#passkeys.getCredential(id);
  }
  /** See {@link PasskeyStore.listCredentials}. */
  listCredentials(principal: string): Promise<PasskeyCredential[]> {
    return this.#passkeys.listCredentials(principal);
  }
  /** See {@link PasskeyStore.updateCredentialCounter}. */
  updateCredentialCounter(id: string, from: number, to: number): Promise<boolean> {
    return this.#passkeys.updateCredentialCounter(id, from, to);
  }
  /** See {@link PasskeyStore.deleteCredential}. */
  deleteCredential(id: string, principal: string): Promise<boolean> {
    return this.#passkeys.deleteCredential(id, principal);
  }
  /** See {@link PasskeyStore.putRegistrationChallenge}. */
  putRegistrationChallenge(key: string, challenge: RegistrationChallenge): Promise<void> {
    return this.#passkeys.putRegistrationChallenge(key, challenge);
  }
  /** See {@link PasskeyStore.takeRegistrationChallenge}. */
  takeRegistrationChallenge(key: string): Promise<RegistrationChallenge | undefined> {
    return this.#passkeys.takeRegistrationChallenge(key);
  }

  /** Replace approval `id`'s value with `next` only if it is still `raw`. */
  async #swap(id: string, raw: string, next: string): Promise<boolean> {
    return (await this.#call('EVAL', COMPARE_AND_SET, '1', this.#key(id), raw, next)) === 1;
  }

  #key(id: string): string {
    return `${this.#prefix}a:${id}`;
  }

  async #read(id: string): Promise<{ raw: string; stored: StoredApproval } | undefined> {
    const raw = await this.#call('GET', this.#key(id));
    if (typeof raw !== 'string') return undefined;
    const parsed = this.#parse<{
      approval: PendingApproval;
      decision: StoredApproval['decision'] | null;
      challenge?: StoredApproval['challenge'] | null;
    }>(raw);
    const { approval, decision, challenge } = parsed;
    return {
      raw,
      stored: { approval, decision: decision ?? undefined, challenge: challenge ?? undefined },
    };
  }

  #parse<T>(raw: string): T {
    try {
      return JSON.parse(raw) as T;
    } catch (error) {
      throw new ApprovalStoreUnavailableError('Redis value is not valid JSON', { cause: error });
    }
  }

  async #call(command: string, ...args: string[]): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        dropStalled(this.#client);
        reject(new Error(`no reply within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
    });
    try {
      return await Promise.race([this.#client.call(command, ...args), timeout]);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new ApprovalStoreUnavailableError(`Redis approval store failed: ${why}`, {
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Redis answers in order: behind a reply that never comes (a half-open
 * connection, a stuck proxy) every later one waits too. Destroy the socket,
 * which ioredis treats as a lost connection (it fails the commands in flight
 * and reconnects), where that is safe for every user of the client: a ready
 * standalone client that resends nothing and reconnects at all.
 */
function dropStalled(client: RedisCommander): void {
  const options = client.options;
  if (
    client.status === 'ready' &&
    client.stream &&
    options?.autoResendUnfulfilledCommands === false &&
    typeof options.retryStrategy === 'function'
  )
    client.stream.destroy();
}

/** Clients already guarded: stores sharing one client add one set of listeners. */
const guarded = new WeakSet<object>();

/**
 * Drop a connection whose handshake (`HELLO`, `AUTH`, the ready check) gets
 * no reply at all within `ms`: ioredis's `connectTimeout` ends once TCP
 * connects, so a server or proxy that accepts and never answers would leave
 * the client in status `connect` for good, each command refused ("Stream
 * isn't writeable"). Destroying the socket makes ioredis connect again by
 * its `retryStrategy`. Only a handshake command that waited `ms` without a
 * byte back counts, whichever step it is; a Redis loading its data answers
 * `LOADING` and is asked again later, and is left alone. Only for a standalone client
 * that resends nothing after a reconnect, and once per client, whatever the
 * number of stores on it. (`@mrtr/replay-redis` does the same for its
 * store; this package does not depend on it.)
 */
function guardHandshakes(client: RedisCommander, ms: number): void {
  if (
    !client.on ||
    client.isCluster ||
    client.options?.autoResendUnfulfilledCommands !== false ||
    guarded.has(client)
  )
    return;
  guarded.add(client);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const clear = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const connected = () => {
    clear();
    const socket = client.stream as
      | { destroy(): void; on?(event: 'data', listener: () => void): unknown }
      | undefined;
    if (!socket) return;
    let heard = false;
    socket.on?.('data', () => {
      heard = true;
    });
    const waiting = () =>
      (client as { commandQueue?: { length: number } }).commandQueue?.length ?? 1;
    const arm = () => {
      timer = setTimeout(() => {
        timer = undefined;
        if (client.status !== 'connect' || client.stream !== socket) return;
        // Silent for `ms` with a command of the handshake waiting for its reply: stalled.
        if (!heard && waiting() > 0) socket.destroy();
        else {
          heard = false; // answering, or between ready checks (a loading Redis): watch on
          arm();
        }
      }, ms);
      timer.unref?.();
    };
    arm();
  };
  client.on('connect', connected);
  for (const event of ['ready', 'close', 'end'] as const) client.on(event, clear);
  if (client.status === 'connect') connected();
}
