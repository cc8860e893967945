import { Redis } from 'ioredis';
import pg from 'pg';

/** The PostgreSQL server of the matrix: `DATABASE_URL` when it is a `postgres://` URL, else the local standard port. */
export const POSTGRES_URL =
  process.env.DATABASE_URL && /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL)
    ? process.env.DATABASE_URL
    : 'postgres://postgres@127.0.0.1:5432/test';

/** The Redis of the matrix: `REDIS_URL`, else the local standard port. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const where = (url: string) => new URL(url).host;

/**
 * Whether a service answers. Under `CI=true` an unreachable service is an
 * error, never a skip: CI must not go green without the combinations that need it.
 * @throws under `CI=true` when `probe` fails.
 */
async function reachable(what: string, url: string, probe: () => Promise<void>): Promise<boolean> {
  try {
    await probe();
    return true;
  } catch (error) {
    const why = `${what} at ${where(url)} is unreachable`;
    if (process.env.CI === 'true') throw new Error(`${why} under CI=true: ${String(error)}`);
    console.warn(`skipping the ${what} combinations: ${why}`);
    return false;
  }
}

/** Whether PostgreSQL answers `SELECT 1` within 2 seconds (see {@link reachable} for `CI=true`). */
export function postgresReachable(): Promise<boolean> {
  return reachable('PostgreSQL', POSTGRES_URL, async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
    } finally {
      await client.end().catch(() => {});
    }
  });
}

/** Whether Redis answers `PING` within 2 seconds (see {@link reachable} for `CI=true`). */
export function redisReachable(): Promise<boolean> {
  return reachable('Redis', REDIS_URL, async () => {
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
    } finally {
      client.disconnect();
    }
  });
}

/** Drop a schema of the matrix and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/** Delete every Redis key that starts with `prefix`. */
export async function deleteKeys(prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
