/**
 * A Redis (or a proxy before it) that accepts a connection and never answers
 * its handshake: ioredis's `connectTimeout` ends once TCP connects, so without
 * a bound of the store's own the client would stay in status `connect` for
 * good, refusing every command, and `connect()` would never settle.
 */
import { ReplayStoreUnavailableError } from '@mrtr/replay';
import { FaultProxy, REDIS_URL, redisReachable } from '@mrtr/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisReplayStore } from '../src/index.js';
import { eventually, onceRequest, sleep } from './support.js';

const reachable = await redisReachable();
const TIMEOUT_MS = 300;
const options = { timeoutMs: TIMEOUT_MS, durability: 'volatile' as const };

describe.skipIf(!reachable && process.env.CI !== 'true')(
  'RedisReplayStore and a handshake that gets no reply',
  () => {
    let proxy: FaultProxy;
    let store: RedisReplayStore | undefined;
    afterEach(async () => {
      proxy.resume();
      await store?.close();
      store = undefined;
      await proxy.stop();
    });

    it('connect() gives up instead of waiting for good', async () => {
      proxy = new FaultProxy(REDIS_URL);
      await proxy.start();
      proxy.stall();
      const started = Date.now();
      const error = await RedisReplayStore.connect(proxy.url(REDIS_URL), options).catch((e) => e);
      expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(10_000);
    });

    it('a reconnect whose handshake hangs is dropped and made again: claims work again', async () => {
      proxy = new FaultProxy(REDIS_URL);
      await proxy.start();
      store = await RedisReplayStore.connect(proxy.url(REDIS_URL), options);
      expect((await store.once(onceRequest(), async () => 1)).status).toBe('performed');
      // The connection hangs; the store drops it, and the reconnect's handshake hangs too.
      proxy.stall();
      await store.once(onceRequest(), async () => 2).catch(() => undefined);
      await sleep(TIMEOUT_MS);
      expect(store.client.status).not.toBe('ready');
      // Redis answers new connections again; the one whose handshake hangs stays held.
      proxy.admit();
      let runs = 0;
      expect(
        await eventually(async () => {
          const r = await store?.once(onceRequest(), async () => ++runs).catch(() => undefined);
          return r?.status === 'performed';
        }),
      ).toBe(true);
      expect(runs).toBe(1);
    });
  },
);
