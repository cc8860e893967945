import { randomUUID } from 'node:crypto';
import { ReplayStoreUnavailableError } from '@mrtr/replay';
import { deleteKeys, FaultProxy, inspector, REDIS_URL, redisReachable } from '@mrtr/test-services';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLAIM } from '../src/commands.js';
import { FAIL_FAST_REDIS_OPTIONS, RedisReplayStore } from '../src/index.js';

const reachable = await redisReachable();
const prefix = `mrtr:test:${process.pid}:${Date.now().toString(36)}:faults:`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function onceRequest(
  overrides: Partial<{ nonce: string; requestDigest: string; expiresAt: number }> = {},
) {
  return {
    nonce: randomUUID(),
    requestDigest: 'sha256:answer-a',
    expiresAt: Date.now() + 300_000,
    ...overrides,
  };
}

/** Resolve once `client` reports `ready` (reconnected), or fail after `ms`. */
function ready(client: RedisReplayStore['client'], ms = 5000): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('client did not reconnect')), ms);
    client.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Poll `check` until it returns true or `ms` pass. */
async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await sleep(25);
  }
  return check();
}

describe('RedisReplayStore options', () => {
  it('rejects a timeoutMs or claimLeaseMs outside 1 to 2^31 − 1 ms with RangeError', () => {
    const client = new Redis(REDIS_URL, { lazyConnect: true });
    expect(() => new RedisReplayStore(client, { timeoutMs: 0 })).toThrow(RangeError);
    // Below 1 ms: Node waits 1 ms whatever it is given, so the setting would not mean what it says.
    expect(() => new RedisReplayStore(client, { timeoutMs: 0.5 })).toThrow(RangeError);
    expect(() => new RedisReplayStore(client, { claimLeaseMs: 0.999 })).toThrow(RangeError);
    expect(() => new RedisReplayStore(client, { claimLeaseMs: 1 })).not.toThrow();
    expect(() => new RedisReplayStore(client, { claimLeaseMs: Number.NaN })).toThrow(RangeError);
    // Past 2^31 − 1 ms Node's timers fire at once: every command would time out.
    expect(() => new RedisReplayStore(client, { timeoutMs: 2 ** 31 })).toThrow(RangeError);
    expect(() => new RedisReplayStore(client, { timeoutMs: Infinity })).toThrow(RangeError);
    expect(() => new RedisReplayStore(client, { timeoutMs: 2 ** 31 - 1 })).not.toThrow();
    client.disconnect();
  });

  it('connect() to a port where nothing listens fails closed with ReplayStoreUnavailableError', async () => {
    const proxy = new FaultProxy(REDIS_URL);
    await proxy.start();
    const url = proxy.url(REDIS_URL);
    await proxy.stop(); // the port is free again: nothing answers there
    await expect(RedisReplayStore.connect(url)).rejects.toBeInstanceOf(ReplayStoreUnavailableError);
  });
});

describe.skipIf(!reachable)('RedisReplayStore against the real Redis', () => {
  let look: Redis;
  let proxy: FaultProxy;
  let store: RedisReplayStore;
  const recordErrors: string[] = [];

  beforeAll(async () => {
    look = inspector();
    proxy = new FaultProxy(REDIS_URL);
    await proxy.start();
    store = await RedisReplayStore.connect(proxy.url(REDIS_URL), {
      keyPrefix: prefix,
      durability: 'volatile', // the shared test Redis keeps no AOF
      timeoutMs: 300,
      onRecordError: (error) => recordErrors.push(String(error)),
    });
  });

  afterEach(async () => {
    proxy.resume();
    if (!(await proxy.isListening())) await proxy.start();
    await ready(store.client);
  });

  afterAll(async () => {
    await store?.close();
    await proxy?.stop();
    if (look) {
      await deleteKeys(prefix, look);
      look.disconnect();
    }
  });

  it('writes the claim under keyPrefix + nonce with PXAT max(expiresAt, now + lease), then the outcome with PXAT expiresAt', async () => {
    const c = onceRequest({ expiresAt: Date.now() + 120_000 });
    let during: { value: string | null; expireAt: number } | undefined;
    const result = await store.once(c, async () => {
      during = {
        value: await look.get(prefix + c.nonce),
        expireAt: Number(await look.call('PEXPIRETIME', prefix + c.nonce)),
      };
      return { deleted: 'x' };
    });
    expect(result).toEqual({ status: 'performed', outcome: { deleted: 'x' } });
    expect(JSON.parse(during?.value ?? 'null')).toMatchObject({ d: 'sha256:answer-a' });
    expect(during?.expireAt).toBe(c.expiresAt); // the 60 s lease ends before expiresAt
    expect(JSON.parse((await look.get(prefix + c.nonce)) ?? 'null')).toEqual({
      d: 'sha256:answer-a',
      o: { deleted: 'x' },
    });
    expect(Number(await look.call('PEXPIRETIME', prefix + c.nonce))).toBe(c.expiresAt);
  });

  it('keeps an unsettled claim for at least claimLeaseMs even when expiresAt is sooner', async () => {
    const c = onceRequest({ expiresAt: Date.now() + 1_000 });
    let expireAt = 0;
    const before = Date.now();
    await store.once(c, async () => {
      expireAt = Number(await look.call('PEXPIRETIME', prefix + c.nonce));
      return null;
    });
    expect(expireAt).toBeGreaterThanOrEqual(before + 60_000);
  });

  it('refuses a nonce whose key holds a foreign value as used and runs nothing', async () => {
    const c = onceRequest();
    await look.set(prefix + c.nonce, 'not a claim', 'PX', 60_000);
    let runs = 0;
    expect(await store.once(c, async () => ++runs)).toEqual({ status: 'refused', reason: 'used' });
    expect(runs).toBe(0);
  });

  it('a claim answered by neither a value nor nil (a proxy out of step) fails closed as unavailable, not as used, and the claim is released', async () => {
    const c = onceRequest();
    const client = store.client;
    const real = client.call.bind(client) as (...a: unknown[]) => Promise<unknown>;
    let runs = 0;
    for (const odd of [['x'], 1]) {
      (client as unknown as { call: unknown }).call = async (...a: unknown[]) => {
        const reply = await real(...a);
        return a[0] === 'EVALSHA' && a[1] === CLAIM.sha ? odd : reply;
      };
      try {
        const error = await store.once(c, async () => ++runs).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
        expect((error as Error).message).toMatch(/neither a value nor nil.*did not run/);
      } finally {
        (client as unknown as { call: unknown }).call = real;
      }
      expect(runs).toBe(0);
      // The SET did land: its release is sent once Redis answers, and then the nonce is free.
      await vi.waitFor(async () => expect(await look.exists(prefix + c.nonce)).toBe(0), {
        timeout: 10_000,
      });
    }
    expect(await store.once(c, async () => ++runs)).toEqual({ status: 'performed', outcome: 1 });
  });

  it('Redis unreachable at claim time: fails closed before the action, claims nothing, and a later retry performs', async () => {
    const c = onceRequest();
    await proxy.stop();
    let runs = 0;
    const started = Date.now();
    const error = await store.once(c, async () => ++runs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(1_000); // failed fast: no offline queue
    expect(runs).toBe(0);
    expect(await look.exists(prefix + c.nonce)).toBe(0);

    await proxy.start();
    await ready(store.client);
    expect(await store.once(c, async () => ++runs)).toEqual({ status: 'performed', outcome: 1 });
    expect(await store.once(c, async () => ++runs)).toEqual({ status: 'replayed', outcome: 1 });
    expect(runs).toBe(1);
  });

  it('Redis stalled at claim time: times out closed; the claim that lands late is deleted, and a retry performs', async () => {
    const c = onceRequest();
    proxy.stall();
    let runs = 0;
    const error = await store.once(c, async () => ++runs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
    expect(runs).toBe(0);
    proxy.resume(); // the held SET reaches Redis now, followed by the release
    expect(await eventually(async () => (await look.exists(prefix + c.nonce)) === 0)).toBe(true);
    expect(await store.once(c, async () => ++runs)).toEqual({ status: 'performed', outcome: 1 });
    expect(runs).toBe(1);
  });

  it('one connection that stops answering while Redis answers: fails closed, then the store makes a new connection and the next claim performs', async () => {
    const c = onceRequest();
    let runs = 0;
    proxy.wedge(); // the store's connection hangs; a new one would pass
    const error = await store.once(c, async () => ++runs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
    expect(runs).toBe(0);
    // Not resumed: behind the reply that never comes, Redis's in-order replies wait for good.
    const next = onceRequest();
    expect(
      await eventually(async () => {
        const r = await store.once(next, async () => ++runs).catch(() => undefined);
        return r?.status === 'performed';
      }),
    ).toBe(true);
    expect(runs).toBe(1);
    // The held SET may land now, after its release went out on the new connection: then the
    // confirmation is refused as in progress until the claim expires. Either way it runs at most once.
    proxy.resume();
    let cRuns = 0;
    for (let i = 0; i < 2; i++) await store.once(c, async () => ++cRuns).catch(() => undefined);
    expect(cRuns).toBeLessThanOrEqual(1);
  });

  it('Redis lost while the action runs: the result is performed, the claim left behind blocks any second run, and the outcome is recorded once Redis is back', async () => {
    const c = onceRequest();
    let runs = 0;
    const result = await store.once(c, async () => {
      runs++;
      await proxy.stop();
      return 'deleted';
    });
    expect(result).toEqual({ status: 'performed', outcome: 'deleted' });
    expect(recordErrors.length).toBeGreaterThan(0);
    await proxy.start();
    await ready(store.client);
    // Until the outcome sent again lands, in_progress; then the recorded outcome. Never a second run.
    const seen = new Set<string>();
    expect(
      await eventually(async () => {
        const r = await store.once(c, async () => ++runs);
        seen.add(JSON.stringify(r));
        return r.status === 'replayed';
      }),
    ).toBe(true);
    for (const r of seen)
      expect([
        '{"status":"refused","reason":"in_progress"}',
        '{"status":"replayed","outcome":"deleted"}',
      ]).toContain(r);
    expect(await store.once({ ...c, requestDigest: 'sha256:b' }, async () => ++runs)).toEqual({
      status: 'refused',
      reason: 'used',
    });
    expect(runs).toBe(1);
  });

  it('releases the claim when the action throws even if Redis is down then, as soon as it is back', async () => {
    const c = onceRequest();
    const boom = new Error('mutation failed');
    await expect(
      store.once(c, async () => {
        await proxy.stop();
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await look.exists(prefix + c.nonce)).toBe(1); // the claim could not be released yet
    await proxy.start();
    await ready(store.client);
    expect(await eventually(async () => (await look.exists(prefix + c.nonce)) === 0)).toBe(true);
    expect(await store.once(c, async () => 'retried')).toEqual({
      status: 'performed',
      outcome: 'retried',
    });
  });

  it('an existing client made with FAIL_FAST_REDIS_OPTIONS serves the first claim while it is still connecting', async () => {
    const client = new Redis(REDIS_URL, FAIL_FAST_REDIS_OPTIONS);
    const own = new RedisReplayStore(client, { keyPrefix: prefix, durability: 'volatile' });
    try {
      expect(await own.once(onceRequest(), async () => 'ok')).toEqual({
        status: 'performed',
        outcome: 'ok',
      });
    } finally {
      await own.close();
      expect(client.status).toBe('ready'); // close() leaves a client it was given open
      await client.quit();
    }
  });
});
