/**
 * @mrtr/replay-redis: the `ReplayStore` contract of `@mrtr/replay` on Redis
 * (≥ 7.0) through `ioredis`, shared by every server instance that points at
 * the same Redis. A claim is one atomic `SET … NX GET PXAT`; the outcome is
 * recorded under the nonce; an identical re-issue gets it back; Redis that
 * cannot be reached fails closed with `ReplayStoreUnavailableError` before
 * anything runs.
 *
 * @example
 * ```ts
 * import { ConfirmationGate } from '@mrtr/gate';
 * import { RedisReplayStore } from '@mrtr/replay-redis';
 *
 * const store = await RedisReplayStore.connect(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
 *   keyPrefix: 'deleter:replay:',
 * });
 * const gate = new ConfirmationGate({ sealer, store });
 * // or on a client you already have (give it FAIL_FAST_REDIS_OPTIONS):
 * // const store = new RedisReplayStore(new Redis(url, FAIL_FAST_REDIS_OPTIONS));
 * const r = await store.once({ nonce, requestDigest, expiresAt }, async () => {
 *   await deleteService(id); // runs at most once per nonce, across instances
 *   return { deleted: id };
 * });
 * // r.status: 'performed' | 'replayed' | 'refused'
 * await store.close();
 * ```
 * @packageDocumentation
 */
export {
  FAIL_FAST_REDIS_OPTIONS,
  RedisReplayStore,
  type RedisReplayStoreOptions,
} from './store.js';
