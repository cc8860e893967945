/**
 * `service-deleter` with `REDIS_URL`: it refuses a Redis that could forget a
 * confirmation unless `MRTR_REDIS_DURABILITY` names the risk. Each test runs
 * a Redis of its own (never the shared one).
 */
import type { ChildProcess } from 'node:child_process';
import { PrivateRedis, redisServerAvailable, startServerProcess } from '@mrtr/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { openReplayStore } from '../src/app.js';

const available = await redisServerAvailable();
const children: ChildProcess[] = [];
const servers: PrivateRedis[] = [];
afterAll(async () => {
  for (const child of children) child.kill();
  for (const redis of servers) await redis.dispose();
});

async function privateRedis(settings: Record<string, string>): Promise<PrivateRedis> {
  const redis = await PrivateRedis.start(settings);
  servers.push(redis);
  return redis;
}

describe.skipIf(!available)('service-deleter replay store on Redis', () => {
  it('openReplayStore refuses a Redis without an append-only file, naming the settings and the opt-in', async () => {
    const redis = await privateRedis({});
    {
      const error = await openReplayStore(redis.url).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect(String(error)).toContain('set appendonly yes and appendfsync always');
      // The opt-in as this app takes it, not the store option behind it.
      expect(String(error)).toContain('set MRTR_REDIS_DURABILITY=volatile');
      expect(String(error)).not.toContain("durability: 'volatile'");
      // A Redis that keeps an fsynced append-only file is accepted.
      const aof = await privateRedis({ appendonly: 'yes', appendfsync: 'always' });
      const replay = await openReplayStore(aof.url);
      await replay.close();
    }
  });

  it('openReplayStore waits for a Redis that is down, and connects once it is back', async () => {
    const redis = await privateRedis({ appendonly: 'yes', appendfsync: 'always' });
    await redis.kill();
    let settled = false;
    const opening = openReplayStore(redis.url).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(settled).toBe(false); // still waiting: not "failed to start"
    await redis.restart();
    const replay = await opening;
    await replay.close();
  });

  it('openReplayStore stops at once on a Redis that refuses its password, and names the reply', async () => {
    const redis = await privateRedis({ requirepass: 'sekrit-0123456789' });
    const url = new URL(redis.url);
    url.password = 'wrong';
    const error = await openReplayStore(url.toString(), 'volatile').catch((e: Error) => e);
    expect(String(error)).toContain('refused the connection: WRONGPASS');
  });

  it('main refuses a value of MRTR_REDIS_DURABILITY the store does not know, naming the variable', async () => {
    const redis = await privateRedis({ appendonly: 'yes', appendfsync: 'always' });
    const started = startServerProcess(new URL('..', import.meta.url).pathname, {
      DATABASE_URL: 'memory://',
      PORT: '0',
      MRTR_TOKENS: 'alice:tok-alice',
      MRTR_SECRET: 'x'.repeat(32),
      REDIS_URL: redis.url,
      MRTR_REDIS_DURABILITY: 'Volatile',
    });
    await expect(started).rejects.toThrow(
      /service-deleter failed to start: MRTR_REDIS_DURABILITY must be one of aof-always, aof-everysec, volatile; got "Volatile"/,
    );
  });

  it('main starts on that Redis when MRTR_REDIS_DURABILITY=volatile names the risk', async () => {
    const redis = await privateRedis({});
    const server = await startServerProcess(new URL('..', import.meta.url).pathname, {
      DATABASE_URL: 'memory://',
      PORT: '0',
      MRTR_TOKENS: 'alice:tok-alice',
      MRTR_SECRET: 'x'.repeat(32),
      REDIS_URL: redis.url,
      MRTR_REDIS_DURABILITY: 'volatile',
    });
    children.push(server.child);
    expect(server.stdout()).toMatch(/replay store: Redis/);
  });
});
