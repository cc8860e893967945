/**
 * Where a combination keeps its data and its replay store. Two server
 * instances of one combination always share both, as two replicas behind a
 * load balancer would.
 *
 * - `memory`: `MemoryReplayStore`, one object shared by both instances (it
 *   cannot be shared across processes); app data in in-memory PGlite.
 * - `redis`: `RedisReplayStore`, one client per instance, under a key prefix
 *   unique to the run; app data in in-memory PGlite.
 * - `postgres`: the app's default `PostgresReplayStore` in the app's own
 *   database on a PostgreSQL server, one pool per instance, in a schema unique
 *   to the run: the claim runs in the transaction that mutates.
 * - `pglite`: the same on one in-memory PGlite.
 */
import { type Database, openDatabase } from '@mrtr/example-kit';
import { MemoryReplayStore } from '@mrtr/replay';
import { RedisReplayStore } from '@mrtr/replay-redis';
import { deleteKeys, dropSchema, POSTGRES_URL, REDIS_URL } from '@mrtr/test-services';

/** The replay stores under test. */
export const STORES = ['memory', 'redis', 'postgres', 'pglite'] as const;
export type StoreName = (typeof STORES)[number];

/** A replay store handed to an app; `undefined` means the app's default store in its own database. */
export type GivenStore = MemoryReplayStore | RedisReplayStore | undefined;

/** The databases and stores of the two instances of one combination. */
export interface Backend {
  /** The app database of each instance (one object, or two pools on one schema). */
  dbs: [Database, Database];
  /** The replay store of each instance. */
  stores: [GivenStore, GivenStore];
  /** Close every connection and drop what the run created (schema, keys). */
  close(): Promise<void>;
}

/**
 * Open the backend of `store` for one combination.
 * @param tag unique to the combination within the run: `[a-z0-9_]+`
 * @throws when PostgreSQL or Redis cannot be reached
 */
export async function openBackend(store: StoreName, tag: string): Promise<Backend> {
  switch (store) {
    case 'memory': {
      const db = await openDatabase('memory://');
      const shared = new MemoryReplayStore();
      return { dbs: [db, db], stores: [shared, shared], close: () => db.close() };
    }
    case 'redis': {
      const db = await openDatabase('memory://');
      const keyPrefix = `mrtr:test-matrix:${tag}:`;
      // The shared test Redis keeps no AOF: accepted by name, as only a test may.
      const a = await RedisReplayStore.connect(REDIS_URL, { keyPrefix, durability: 'volatile' });
      const b = await RedisReplayStore.connect(REDIS_URL, { keyPrefix, durability: 'volatile' });
      return {
        dbs: [db, db],
        stores: [a, b],
        async close() {
          await a.close();
          await b.close();
          await deleteKeys(keyPrefix);
          await db.close();
        },
      };
    }
    case 'postgres': {
      const searchPath = `mrtr_matrix_${tag}`;
      const a = await openDatabase(POSTGRES_URL, { searchPath });
      const b = await openDatabase(POSTGRES_URL, { searchPath });
      return {
        dbs: [a, b],
        stores: [undefined, undefined],
        async close() {
          await a.close();
          await b.close();
          await dropSchema(searchPath);
        },
      };
    }
    case 'pglite': {
      const db = await openDatabase('memory://');
      return { dbs: [db, db], stores: [undefined, undefined], close: () => db.close() };
    }
  }
}
