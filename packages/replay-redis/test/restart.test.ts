import { PrivateRedis, redisServerAvailable } from '@mrtr/test-services';
import { describe, expect, it } from 'vitest';
import { RedisReplayStore, type RedisReplayStoreOptions } from '../src/index.js';
import { eventually, onceRequest } from './support.js';

const available = await redisServerAvailable();

/**
 * Perform a claim on a Redis of `settings`, SIGKILL Redis, start it again
 * from what its dir holds, and present the identical claim: what it gets,
 * and how often the action ran in all.
 */
async function performKillRestart(
  settings: Record<string, string>,
  options: RedisReplayStoreOptions,
): Promise<{ again: string; runs: number; other: string }> {
  const redis = await PrivateRedis.start(settings);
  const store = await RedisReplayStore.connect(redis.url, options);
  try {
    const c = onceRequest();
    let runs = 0;
    expect(await store.once(c, async () => ++runs)).toEqual({ status: 'performed', outcome: 1 });
    await redis.kill(); // no shutdown, no last write
    await redis.restart(); // same port and dir: whatever Redis kept on disk
    let again = '';
    // The store reconnects by itself; poll past the moments it is still reconnecting.
    await eventually(async () => {
      const r = await store.once(c, async () => ++runs);
      again = r.status === 'refused' ? `refused/${r.reason}` : r.status;
      return true;
    });
    const r = await store.once({ ...c, requestDigest: 'sha256:answer-b' }, async () => ++runs);
    return { again, runs, other: r.status === 'refused' ? `refused/${r.reason}` : r.status };
  } finally {
    await store.close();
    await redis.dispose();
  }
}

describe.skipIf(!available)(
  'RedisReplayStore across a Redis restart (kill -9), on a Redis of its own',
  () => {
    it("a volatile Redis forgets a completed onceRequest: the identical retry runs the action again (why durability: 'volatile' must be named)", async () => {
      const { again, runs } = await performKillRestart({}, { durability: 'volatile' });
      expect(again).toBe('performed');
      expect(runs).toBe(2);
    });

    it('with appendonly yes and appendfsync always, the completed claim survives: replayed, and a different answer is refused as used', async () => {
      const { again, runs, other } = await performKillRestart(
        { appendonly: 'yes', appendfsync: 'always' },
        {},
      );
      expect(again).toBe('replayed');
      expect(other).toBe('refused/used');
      expect(runs).toBe(1);
    });
  },
);
