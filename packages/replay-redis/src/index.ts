/**
 * @mrtr/replay-redis: the `ReplayStore` contract of `@mrtr/replay` on Redis
 * (≥ 7.0) through `ioredis`, shared by every server instance that points at
 * the same Redis. A claim is one atomic `SET … NX GET PXAT`; the outcome is
 * recorded under the nonce; an identical re-issue gets it back; Redis that
 * cannot be reached fails closed with `ReplayStoreUnavailableError` before
 * anything runs. A Redis that could forget a claim (no `appendonly yes` with
 * `appendfsync always`, eviction, replicas nobody waits for) is refused with
 * `RedisDurabilityError` unless the operator accepts it by name.
 *
 * @example
 * ```ts
 * import { ConfirmationGate } from '@mrtr/gate';
 * import { RedisReplayStore } from '@mrtr/replay-redis';
 * import type { TicketSealer } from '@mrtr/ticket';
 *
 * declare const sealer: TicketSealer;
 * declare const nonce: string, requestDigest: string, expiresAt: number; // from the ticket
 * declare const id: string;
 * declare function deleteService(id: string): Promise<void>;
 * // Redis with appendonly yes, appendfsync always (else RedisDurabilityError):
 * const store = await RedisReplayStore.connect(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
 *   keyPrefix: 'deleter:replay:',
 *   // replicas: 1,              // a primary with replicas: WAIT for one on each write
 *   // durability: 'volatile',   // tests only: accept a Redis that may forget claims
 * });
 * const gate = new ConfirmationGate({ sealer, store });
 * // or on a client you already have (give it FAIL_FAST_REDIS_OPTIONS):
 * // const store = new RedisReplayStore(new Redis(url, FAIL_FAST_REDIS_OPTIONS));
 * // await store.checkDurability(); // fail at start, not at the first claim
 * const r = await store.once({ nonce, requestDigest, expiresAt }, async () => {
 *   await deleteService(id); // runs at most once per nonce, across instances
 *   return { deleted: id };
 * });
 * // r.status: 'performed' | 'replayed' | 'refused'
 * await store.close();
 * ```
 * @module @mrtr/replay-redis
 * @packageDocumentation
 */
export {
  REDIS_DURABILITIES,
  type RedisDurability,
  RedisDurabilityError,
  type RedisDurabilityReport,
  RedisRefusedConnectionError,
  type RedisServerDurability,
} from './durability.js';
export { FAIL_FAST_REDIS_OPTIONS, type RedisReplayStoreOptions } from './options.js';
export { MAX_PENDING_WRITES } from './pending.js';
export { RedisReplayStore } from './store.js';
