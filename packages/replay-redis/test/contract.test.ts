import { describeReplayStoreContract } from '@mrtr/replay/contract-tests';
import { deleteKeys, inspector, REDIS_URL, redisReachable } from '@mrtr/test-services';
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { FAIL_FAST_REDIS_OPTIONS, RedisReplayStore } from '../src/index.js';

const reachable = await redisReachable();
const prefix = `mrtr:test:${process.pid}:${Date.now().toString(36)}:`;

afterAll(async () => {
  if (!reachable) return;
  const client = inspector();
  await deleteKeys(prefix, client);
  client.disconnect();
});

describeReplayStoreContract('RedisReplayStore.connect(url)', {
  open: () =>
    RedisReplayStore.connect(REDIS_URL, {
      keyPrefix: `${prefix}url:`,
      durability: 'volatile', // the shared test Redis keeps no AOF
    }),
  close: (store) => store.close(),
  whileRunning: 'in_progress',
  skip: !reachable,
});

describeReplayStoreContract('RedisReplayStore on an existing client', {
  open: () =>
    new RedisReplayStore(new Redis(REDIS_URL, FAIL_FAST_REDIS_OPTIONS), {
      keyPrefix: `${prefix}client:`,
      durability: 'volatile',
    }),
  close: async (store) => {
    await store.close();
    await (store.client as Redis).quit();
  },
  whileRunning: 'in_progress',
  skip: !reachable,
});
