/**
 * @mrtr/test-services: what the test suites of this repository need to use
 * the machine's real PostgreSQL and Redis. One rule lives here for all of
 * them: where a service cannot be reached, a test says so and skips, except
 * under `CI=true`, where the run fails instead, so CI never goes green
 * without the tests that need the service. Fault tests that stall, kill or
 * restart Redis start a {@link PrivateRedis} of their own instead.
 *
 * @example
 * ```ts
 * import { dropSchema, poolInSchema, postgresReachable } from '@mrtr/test-services';
 * const reachable = await postgresReachable();
 * describe.skipIf(!reachable)('on PostgreSQL', () => { … });
 * ```
 * @packageDocumentation
 */
import { Redis } from 'ioredis';
import pg from 'pg';

export {
  type BackendTerminator,
  createOwnDatabase,
  type OwnDatabase,
  terminateBackendsRepeatedly,
} from './database.js';
export { type ServerProcess, startServerProcess } from './process.js';
export { FaultProxy } from './proxy.js';
export { PrivateRedis, type RedisSettings, redisServerAvailable } from './redis-server.js';

/** The PostgreSQL server tests use: `DATABASE_URL` when it is a `postgres://` URL, else the local standard port. */
export const POSTGRES_URL =
  process.env.DATABASE_URL && /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL)
    ? process.env.DATABASE_URL
    : 'postgres://postgres@127.0.0.1:5432/test';

/** The Redis tests use: `REDIS_URL`, else the local standard port. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const SCHEMA = /^[a-z_][a-z0-9_]*$/;

/**
 * Whether a service answers `probe`.
 * @throws under `CI=true` when it does not: CI must not go green without it.
 */
async function reachable(what: string, url: string, probe: () => Promise<void>): Promise<boolean> {
  try {
    await probe();
    return true;
  } catch (error) {
    const why = `${what} at ${new URL(url).host} is unreachable`;
    if (process.env.CI === 'true') throw new Error(`${why} under CI=true: ${String(error)}`);
    console.warn(`skipping ${what} tests: ${why}`);
    return false;
  }
}

/** Whether PostgreSQL answers `SELECT 1` within 2 seconds; throws under `CI=true` when not. */
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

/** Whether Redis answers `PING` within 2 seconds; throws under `CI=true` when not. */
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

/**
 * A `pg.Pool` whose connections use schema `schema` (created if missing).
 * @param max pool size; @param pipeline turn on query pipelining.
 * @throws on a schema name that is not a plain lower-case identifier.
 */
export async function poolInSchema(schema: string, max = 10, pipeline = false): Promise<pg.Pool> {
  if (!SCHEMA.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const setup = new pg.Client({ connectionString: POSTGRES_URL });
  await setup.connect();
  try {
    await setup.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  } finally {
    await setup.end();
  }
  const pool = new pg.Pool({
    connectionString: POSTGRES_URL,
    max,
    pipeline,
    options: `-c search_path=${schema}`,
  });
  pool.on('error', () => {}); // idle clients killed by a fault test
  return pool;
}

/** Drop a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  if (!SCHEMA.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/** A plain Redis client for inspecting what a store wrote (errors swallowed: fault tests kill connections). */
export function inspector(): Redis {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  return client;
}

/** Delete every Redis key that starts with `prefix`, through `client` or a short-lived one. */
export async function deleteKeys(prefix: string, client?: Redis): Promise<void> {
  const c = client ?? inspector();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await c.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await c.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    if (!client) c.disconnect();
  }
}
