import { ReplayStoreUnavailableError } from '@mrtr/replay';
import { PrivateRedis, redisServerAvailable } from '@mrtr/test-services';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitCommand } from '../src/commands.js';
import {
  FAIL_FAST_REDIS_OPTIONS,
  RedisDurabilityError,
  type RedisDurabilityReport,
  RedisRefusedConnectionError,
  RedisReplayStore,
  type RedisReplayStoreOptions,
} from '../src/index.js';
import { eventually, looker, onceRequest } from './support.js';

const available = await redisServerAvailable();

/** What `connect` does with a private Redis of `settings` under `options`: the store, or the error. */
async function connectTo(
  settings: Record<string, string>,
  options: RedisReplayStoreOptions = {},
): Promise<RedisReplayStore | Error> {
  const redis = await PrivateRedis.start(settings);
  try {
    const store = await RedisReplayStore.connect(redis.url, options).catch((e: Error) => e);
    if (store instanceof RedisReplayStore) {
      // Accepted means usable: a claim performs.
      expect((await store.once(onceRequest(), async () => 'ran')).status).toBe('performed');
      await store.close();
    }
    return store;
  } finally {
    await redis.dispose();
  }
}

const AOF_ALWAYS = { appendonly: 'yes', appendfsync: 'always' };

describe('RedisReplayStore durability options', () => {
  it('rejects a durability that is not one of its names, and a bad replicas, before connecting', async () => {
    const client = new Redis({ lazyConnect: true });
    // A caller without types, passing a typo or a boolean:
    expect(() => new RedisReplayStore(client, { durability: 'volatle' as never })).toThrow(
      /durability must be one of 'aof-always', 'aof-everysec', 'volatile'/,
    );
    expect(() => new RedisReplayStore(client, { replicas: -1 })).toThrow(RangeError);
    expect(() => new RedisReplayStore(client, { replicas: 1.5 })).toThrow(RangeError);
    await expect(
      RedisReplayStore.connect('redis://127.0.0.1:1', { durability: true as never }),
    ).rejects.toBeInstanceOf(TypeError);
    client.disconnect();
  });

  it('uses WAITAOF 0 n for replicas only where every server has it and durability is not volatile', () => {
    const report = (waitaof: boolean) =>
      ({ servers: [{ waitaof }] }) as unknown as RedisDurabilityReport;
    const o = { replicas: 2, timeoutMs: 1000 };
    expect(waitCommand({ ...o, durability: 'aof-always' }, report(true))).toEqual([
      'WAITAOF',
      '0',
      '2',
      '500',
    ]);
    expect(waitCommand({ ...o, durability: 'aof-always' }, report(false))).toEqual([
      'WAIT',
      '2',
      '500',
    ]);
    expect(waitCommand({ ...o, durability: 'volatile' }, report(true))).toEqual([
      'WAIT',
      '2',
      '500',
    ]);
    expect(waitCommand({ ...o, replicas: 0, durability: 'aof-always' }, report(true))).toBe(
      undefined,
    );
  });
});

describe.skipIf(!available)('RedisReplayStore durability check, on a Redis of its own', () => {
  it('refuses a volatile Redis by default, naming the settings to change and the opt-in', async () => {
    const error = await connectTo({});
    expect(error).toBeInstanceOf(RedisDurabilityError);
    expect(error).toBeInstanceOf(ReplayStoreUnavailableError); // a gate fails closed on it
    const message = (error as Error).message;
    expect(message).toContain('aof_enabled:0');
    expect(message).toContain('set appendonly yes and appendfsync always');
    expect(message).toContain("durability: 'volatile'");
    expect((error as RedisDurabilityError).report.servers[0]?.aofEnabled).toBe(false);
  });

  it("accepts a volatile Redis when the operator names durability: 'volatile'", async () => {
    expect(await connectTo({}, { durability: 'volatile' })).toBeInstanceOf(RedisReplayStore);
  });

  it('accepts AOF with appendfsync always', async () => {
    expect(await connectTo(AOF_ALWAYS)).toBeInstanceOf(RedisReplayStore);
  });

  it("refuses appendfsync everysec by default, and accepts it under durability: 'aof-everysec'", async () => {
    const everysec = { appendonly: 'yes', appendfsync: 'everysec' };
    const error = await connectTo(everysec);
    expect(error).toBeInstanceOf(RedisDurabilityError);
    expect((error as Error).message).toContain('appendfsync everysec');
    expect((error as Error).message).toContain("durability: 'aof-everysec'");
    expect(await connectTo(everysec, { durability: 'aof-everysec' })).toBeInstanceOf(
      RedisReplayStore,
    );
  });

  it('refuses appendfsync no even under aof-everysec', async () => {
    const error = await connectTo(
      { appendonly: 'yes', appendfsync: 'no' },
      { durability: 'aof-everysec' },
    );
    expect(error).toBeInstanceOf(RedisDurabilityError);
    expect((error as Error).message).toContain('appendfsync no');
  });

  it('refuses a Redis that may evict claims, and accepts maxmemory with noeviction', async () => {
    const lru = await connectTo({
      ...AOF_ALWAYS,
      maxmemory: '100mb',
      'maxmemory-policy': 'volatile-lru',
    });
    expect(lru).toBeInstanceOf(RedisDurabilityError);
    expect((lru as Error).message).toContain('set maxmemory-policy noeviction');
    expect(
      await connectTo({ ...AOF_ALWAYS, maxmemory: '100mb', 'maxmemory-policy': 'noeviction' }),
    ).toBeInstanceOf(RedisReplayStore);
  });

  it('refuses when CONFIG is forbidden (managed Redis) and the fsync policy cannot be read; volatile opts in', async () => {
    const redis = await PrivateRedis.start(AOF_ALWAYS);
    const admin = new Redis(redis.url);
    try {
      await admin.call('ACL', 'SETUSER', 'store', 'on', '>pw', '~*', '+@all', '-config');
      const url = `redis://store:pw@127.0.0.1:${redis.port}`;
      const error = await RedisReplayStore.connect(url).catch((e: Error) => e);
      expect(error).toBeInstanceOf(RedisDurabilityError);
      expect((error as Error).message).toMatch(/refused CONFIG GET appendfsync \(NOPERM/);
      const store = await RedisReplayStore.connect(url, { durability: 'volatile' });
      expect((await store.once(onceRequest(), async () => 1)).status).toBe('performed');
      await store.close();
    } finally {
      admin.disconnect();
      await redis.dispose();
    }
  });

  it('on a client handed in: checkDurability() and the first claim refuse a volatile Redis; nothing runs', async () => {
    const redis = await PrivateRedis.start({});
    const client = new Redis(redis.url, FAIL_FAST_REDIS_OPTIONS);
    try {
      const store = new RedisReplayStore(client);
      await expect(store.checkDurability()).rejects.toBeInstanceOf(RedisDurabilityError);
      let runs = 0;
      await expect(store.once(onceRequest(), async () => ++runs)).rejects.toBeInstanceOf(
        RedisDurabilityError,
      );
      expect(runs).toBe(0);
      expect(await client.dbsize()).toBe(0); // nothing was claimed
      await store.close();
    } finally {
      client.disconnect();
      await redis.dispose();
    }
  });

  it('reads the settings again after a reconnect: a server turned volatile is refused at the next claim', async () => {
    const redis = await PrivateRedis.start(AOF_ALWAYS);
    const admin = looker(redis.url);
    const store = await RedisReplayStore.connect(redis.url);
    try {
      expect((await store.once(onceRequest(), async () => 1)).status).toBe('performed');
      await admin.config('SET', 'appendonly', 'no');
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'); // the store reconnects
      // A claim racing the reconnect may still pass the earlier check; after it, none does.
      expect(
        await eventually(async () => {
          const error = await store.once(onceRequest(), async () => 1).catch((e: unknown) => e);
          return error instanceof RedisDurabilityError;
        }),
      ).toBe(true);
      let runs = 0;
      await expect(store.once(onceRequest(), async () => ++runs)).rejects.toBeInstanceOf(
        RedisDurabilityError,
      );
      expect(runs).toBe(0);
    } finally {
      await store.close();
      admin.disconnect();
      await redis.dispose();
    }
  });
});

describe.skipIf(!available)('RedisReplayStore with a replica, on Redis of its own', () => {
  let primary: PrivateRedis;
  let replica: PrivateRedis;
  let look: Redis;

  beforeAll(async () => {
    primary = await PrivateRedis.start(AOF_ALWAYS);
    replica = await PrivateRedis.start({ ...AOF_ALWAYS, replicaof: `127.0.0.1 ${primary.port}` });
    look = looker(replica.url);
    const linked = await eventually(async () =>
      /master_link_status:up/.test(await look.info('replication')),
    );
    expect(linked).toBe(true);
  });

  afterAll(async () => {
    look?.disconnect();
    await replica?.dispose();
    await primary?.dispose();
  });

  it('refuses a primary with replicas when no replica must acknowledge (replicas: 0)', async () => {
    const error = await RedisReplayStore.connect(primary.url).catch((e: Error) => e);
    expect(error).toBeInstanceOf(RedisDurabilityError);
    expect((error as Error).message).toContain('has 1 replica(s)');
    expect((error as Error).message).toContain('set the store option replicas');
  });

  it('replicas: 1 waits for the replica; the claim and the outcome are on it when once returns', async () => {
    const store = await RedisReplayStore.connect(primary.url, {
      replicas: 1,
      keyPrefix: 'r:',
      // The replica fsyncs every write: on a loaded machine its WAIT took longer than the
      // default 1 s. This test is about the acknowledged path; the next one times out on purpose.
      timeoutMs: 15_000,
    });
    try {
      expect(store.client.status).toBe('ready');
      const report = await store.checkDurability();
      // Redis 7.0 has no WAITAOF: detected, so WAIT is used.
      expect(report.servers[0]?.waitaof).toBe(
        !/^7\.[01]\.|^[0-6]\./.test(report.servers[0]?.version ?? ''),
      );
      const c = onceRequest();
      let onReplica: string | null = null;
      const result = await store.once(c, async () => {
        onReplica = await look.get(`r:${c.nonce}`);
        return 'done';
      });
      expect(result).toEqual({ status: 'performed', outcome: 'done' });
      expect(JSON.parse(onReplica ?? 'null')).toMatchObject({ d: c.requestDigest });
      expect(JSON.parse((await look.get(`r:${c.nonce}`)) ?? 'null')).toMatchObject({ o: 'done' });
    } finally {
      await store.close();
    }
  });

  it('a replica that does not acknowledge: the claim fails closed and is released; the outcome is reported to onRecordError', async () => {
    const recordErrors: string[] = [];
    const store = await RedisReplayStore.connect(primary.url, {
      replicas: 1,
      keyPrefix: 's:',
      timeoutMs: 2000,
      onRecordError: (error) => recordErrors.push(String(error)),
    });
    const onPrimary = looker(primary.url);
    try {
      const c = onceRequest();
      let runs = 0;
      replica.stall();
      const error = await store.once(c, async () => ++runs).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
      expect(String(error)).toContain('WAIT counted 0 of 1 replicas');
      expect(runs).toBe(0);
      expect(await onPrimary.exists(`s:${c.nonce}`)).toBe(0); // released on the primary
      replica.resume();

      // The replica stalls while the action runs: performed (it ran), outcome reported.
      const d = onceRequest();
      const result = await store.once(d, async () => {
        replica.stall();
        return ++runs;
      });
      expect(result).toEqual({ status: 'performed', outcome: 1 });
      expect(recordErrors.join('\n')).toContain('the outcome was not kept by enough replicas');
      replica.resume();
      // The primary kept the outcome: an identical retry gets it back, never a second run.
      expect(await store.once(d, async () => ++runs)).toEqual({ status: 'replayed', outcome: 1 });
      expect(runs).toBe(1);
      // And once the replica answers again, claims go through.
      expect(
        await eventually(
          async () => (await store.once(onceRequest(), async () => 0)).status === 'performed',
        ),
      ).toBe(true);
    } finally {
      replica.resume();
      onPrimary.disconnect();
      await store.close();
    }
  });
});

describe('error classes', () => {
  it('instanceof tells a durability refusal and a refused connection from an unreachable Redis', () => {
    const down = new ReplayStoreUnavailableError(
      'Redis replay store unreachable: Connection is closed.',
    );
    const report = { durability: 'aof-always' as const, replicas: 0, servers: [] };
    const short = new RedisDurabilityError(['appendonly is no'], report);
    const refused = new RedisRefusedConnectionError(
      new Error('WRONGPASS invalid username-password pair'),
    );
    expect(down).not.toBeInstanceOf(RedisDurabilityError);
    expect(down).not.toBeInstanceOf(RedisRefusedConnectionError);
    expect(short).toBeInstanceOf(RedisDurabilityError);
    expect(refused).toBeInstanceOf(RedisRefusedConnectionError);
    // Both are still unavailable stores to a gate, which fails closed on them.
    for (const e of [short, refused]) expect(e).toBeInstanceOf(ReplayStoreUnavailableError);
    expect([short.name, refused.name]).toEqual([
      'RedisDurabilityError',
      'RedisRefusedConnectionError',
    ]);
    expect(refused.message).toBe(
      'Redis replay store refused the connection: WRONGPASS invalid username-password pair',
    );
  });
});
