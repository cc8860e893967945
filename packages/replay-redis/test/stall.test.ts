import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ReplayStoreUnavailableError } from '@mrtr/replay';
import { PrivateRedis, redisServerAvailable } from '@mrtr/test-services';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisReplayStore } from '../src/index.js';
import { eventually, looker, onceRequest, sleep } from './support.js';

const available = await redisServerAvailable();
/** The store's longest wait for a reply, milliseconds (room for a loaded machine). */
const TIMEOUT_MS = 1_500;
/** How long a stall lasts: longer than TIMEOUT_MS, so every wait of the store gives up, its release's too. */
const STALL_MS = 2 * TIMEOUT_MS;

// Each test gets a fresh Redis of its own (appendonly yes, appendfsync always): no
// script is cached in it yet, as on a Redis that just restarted or failed over.
describe.skipIf(!available)('RedisReplayStore when its Redis stalls (SIGSTOP) or dies', () => {
  let redis: PrivateRedis;
  let store: RedisReplayStore;
  /** A second server instance on the same Redis: it retries the confirmation. */
  let other: RedisReplayStore;
  let look: Redis;
  const recordErrors: string[] = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start({ appendonly: 'yes', appendfsync: 'always' });
  });

  afterAll(async () => {
    await redis?.dispose();
  });

  async function open(): Promise<void> {
    await redis.restart({ empty: true });
    recordErrors.length = 0;
    const options = {
      timeoutMs: TIMEOUT_MS,
      onRecordError: (error: unknown) => recordErrors.push(String(error)),
    };
    store = await RedisReplayStore.connect(redis.url, options);
    other = await RedisReplayStore.connect(redis.url, options);
    look = looker(redis.url);
  }

  /** Whether Redis's append-only files mention `text`. */
  async function aofHas(text: string): Promise<boolean> {
    const dir = join(redis.dir, 'appendonlydir');
    for (const name of await readdir(dir))
      if ((await readFile(join(dir, name), 'utf8')).includes(text)) return true;
    return false;
  }

  afterEach(async () => {
    redis.resume();
    await store?.close();
    await other?.close();
    look?.disconnect();
  });

  it('SIGSTOP during once: fails closed without running; after SIGCONT an identical claim on another instance performs', async () => {
    await open();
    const c = onceRequest();
    let runs = 0;
    redis.stall();
    const error = await store.once(c, async () => ++runs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
    expect(runs).toBe(0);
    await sleep(STALL_MS); // the stall outlasts every wait of the store, its release's too
    redis.resume(); // the held SET lands now; the store must delete it, whatever its connection does

    const seen = new Set<string>();
    expect(
      await eventually(async () => {
        const r = await other.once(c, async () => ++runs);
        seen.add(r.status === 'refused' ? r.reason : r.status);
        return r.status === 'performed';
      }),
    ).toBe(true);
    expect(runs).toBe(1);
    expect([...seen].every((s) => s === 'performed' || s === 'in_progress')).toBe(true);
    expect(await store.once(c, async () => ++runs)).toEqual({ status: 'replayed', outcome: 1 });
  });

  it('SIGSTOP while a failed action releases its claim: after SIGCONT an identical claim performs', async () => {
    await open();
    const c = onceRequest();
    const boom = new Error('mutation failed');
    await expect(
      store.once(c, async () => {
        redis.stall();
        throw boom;
      }),
    ).rejects.toBe(boom);
    await sleep(STALL_MS);
    redis.resume();
    expect(
      await eventually(
        async () => (await other.once(c, async () => 'again')).status === 'performed',
      ),
    ).toBe(true);
  });

  it('SIGSTOP during the outcome record: performed, reported; after SIGCONT identical retries get the outcome, never a second run', async () => {
    await open();
    const c = onceRequest();
    let runs = 0;
    const result = await store.once(c, async () => {
      redis.stall();
      return ++runs;
    });
    expect(result).toEqual({ status: 'performed', outcome: 1 });
    expect(recordErrors.length).toBe(1);
    await sleep(STALL_MS);
    redis.resume();
    const seen = new Set<string>();
    expect(
      await eventually(async () => {
        const r = await other.once(c, async () => ++runs);
        seen.add(JSON.stringify(r));
        return r.status === 'replayed';
      }),
    ).toBe(true);
    expect(runs).toBe(1);
    for (const r of seen)
      expect([
        '{"status":"refused","reason":"in_progress"}',
        '{"status":"replayed","outcome":1}',
      ]).toContain(r);
  });

  it('Redis killed during the outcome record and restarted from its AOF: the outcome is recorded after the reconnect', async () => {
    await open();
    const c = onceRequest();
    let runs = 0;
    const result = await store.once(c, async () => {
      await redis.kill();
      return ++runs;
    });
    expect(result).toEqual({ status: 'performed', outcome: 1 });
    expect(recordErrors.length).toBe(1);
    await redis.restart(); // the claim is in the AOF: it blocks a second run meanwhile
    expect(
      await eventually(async () => (await other.once(c, async () => ++runs)).status === 'replayed'),
    ).toBe(true);
    expect(runs).toBe(1);
  });

  it('Redis killed while a failed action releases its claim, restarted from its AOF: the claim it kept is released after the reconnect', async () => {
    await open();
    const c = onceRequest();
    await expect(
      store.once(c, async () => {
        await redis.kill();
        throw new Error('mutation failed');
      }),
    ).rejects.toThrow('mutation failed');
    expect(await aofHas(c.nonce)).toBe(true); // the claim survives the restart
    await redis.restart();
    expect(await eventually(async () => (await look.exists(`mrtr:replay:${c.nonce}`)) === 0)).toBe(
      true,
    );
    expect((await other.once(c, async () => 'again')).status).toBe('performed');
  });

  it('Redis stalled, then killed and restarted empty: the claim that never landed blocks nothing', async () => {
    await open();
    const c = onceRequest();
    redis.stall();
    await expect(store.once(c, async () => 1)).rejects.toBeInstanceOf(ReplayStoreUnavailableError);
    await sleep(STALL_MS);
    await redis.restart({ empty: true }); // SIGKILL ends a stopped process too
    expect(
      await eventually(async () => (await store.once(c, async () => 2)).status === 'performed'),
    ).toBe(true);
  });
});
