import { Redis } from 'ioredis';

/** The Redis tests use: `REDIS_URL`, or the local standard port. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Whether Redis answers. Under `CI=true` an unreachable server is an error,
 * never a skip: CI must not go green without the tests that need it.
 */
export async function redisReachable(): Promise<boolean> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch (error) {
    if (process.env.CI === 'true')
      throw new Error(
        `Redis at ${new URL(REDIS_URL).host} is unreachable under CI=true: ${String(error)}`,
      );
    console.warn(`skipping Redis tests: ${new URL(REDIS_URL).host} is unreachable`);
    return false;
  } finally {
    client.disconnect();
  }
}

/** A plain client for inspecting what the store wrote. */
export function inspector(): Redis {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  return client;
}

/** Delete every key that starts with `prefix`. */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
