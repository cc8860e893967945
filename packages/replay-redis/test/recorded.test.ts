/**
 * `recorded` reads what a settled claim recorded, without claiming or
 * waiting: what the gate asks before it would put a question again with a
 * ticket that may be spent, so that every instance tells a used ticket so.
 */
import { ReplayStoreUnavailableError } from '@mrtr/replay';
import { deleteKeys, FaultProxy, inspector, REDIS_URL, redisReachable } from '@mrtr/test-services';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisReplayStore } from '../src/index.js';
import { onceRequest } from './support.js';

const reachable = await redisReachable();
const prefix = `mrtr:test:${process.pid}:${Date.now().toString(36)}:recorded:`;

describe.skipIf(!reachable)('RedisReplayStore.recorded', () => {
  let look: Redis;
  let a: RedisReplayStore;
  let b: RedisReplayStore;
  beforeAll(async () => {
    look = inspector();
    // Two stores on one Redis: two server instances.
    const options = { keyPrefix: prefix, durability: 'volatile' as const }; // the shared test Redis keeps no AOF
    a = await RedisReplayStore.connect(REDIS_URL, options);
    b = await RedisReplayStore.connect(REDIS_URL, options);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    if (look) {
      await deleteKeys(prefix, look);
      look.disconnect();
    }
  });

  it('a settled claim: replayed for the same answer, used for another, on either instance; nothing for an unknown nonce', async () => {
    const r = onceRequest();
    expect(await a.recorded(r)).toBeUndefined();
    await a.once(r, async () => ({ deleted: 'svc_1' }));
    for (const store of [a, b]) {
      expect(await store.recorded(r)).toEqual({
        status: 'replayed',
        outcome: { deleted: 'svc_1' },
      });
      expect(await store.recorded({ ...r, requestDigest: 'sha256:other' })).toEqual({
        status: 'refused',
        reason: 'used',
      });
    }
    // Reading claimed nothing: the key holds the outcome as before.
    expect(JSON.parse((await look.get(prefix + r.nonce)) ?? 'null')).toEqual({
      d: r.requestDigest,
      o: { deleted: 'svc_1' },
    });
  });

  it('a claim whose action still runs is neither waited for nor seen, whatever the digest', async () => {
    const r = onceRequest();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const claimed = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const first = a.once(r, async () => {
      entered();
      await held;
      return 'done';
    });
    await claimed;
    expect(await b.recorded(r)).toBeUndefined();
    expect(await b.recorded({ ...r, requestDigest: 'sha256:other' })).toBeUndefined();
    release();
    expect(await first).toEqual({ status: 'performed', outcome: 'done' });
    expect(await b.recorded(r)).toEqual({ status: 'replayed', outcome: 'done' });
  });

  it('a value the store did not write is used, as once reads it', async () => {
    for (const foreign of ['not a claim', '{"t":"x","o":1}', '[1]', '{"d":"sha256:answer-a"}']) {
      const r = onceRequest();
      await look.set(prefix + r.nonce, foreign, 'PX', 60_000);
      expect(await a.recorded(r)).toEqual({ status: 'refused', reason: 'used' });
    }
  });

  it('an expired entry is forgotten by Redis: nothing recorded', async () => {
    const r = onceRequest({ expiresAt: Date.now() + 300 });
    // The claim's lease keeps the key past expiresAt; the outcome is written with PXAT expiresAt.
    await a.once(r, async () => 'done');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await a.recorded(r)).toBeUndefined();
  });

  it('throws TypeError for a malformed request and sends nothing', async () => {
    await expect(a.recorded({ ...onceRequest(), nonce: '' })).rejects.toBeInstanceOf(TypeError);
  });

  it('fails closed with ReplayStoreUnavailableError when Redis does not answer', async () => {
    const proxy = new FaultProxy(REDIS_URL);
    await proxy.start();
    const store = await RedisReplayStore.connect(proxy.url(REDIS_URL), {
      keyPrefix: prefix,
      durability: 'volatile',
      timeoutMs: 300,
    });
    try {
      proxy.stall();
      await expect(store.recorded(onceRequest())).rejects.toBeInstanceOf(
        ReplayStoreUnavailableError,
      );
      proxy.resume();
    } finally {
      await store.close();
      await proxy.stop();
    }
  });
});
