/**
 * notes_delete when the replay store fails under it, against the real
 * services: the request fails closed with a JSON-RPC error, nothing is
 * deleted, nothing stays claimed, and a later retry with the same ticket
 * behaves as the ReplayStore contract says.
 */

import { RedisReplayStore } from '@mrtr/replay-redis';
import { pgPoolDriver } from '@mrtr/sql';
import {
  deleteKeys,
  dropSchema,
  FaultProxy,
  POSTGRES_URL,
  postgresReachable,
  REDIS_URL,
  redisReachable,
} from '@mrtr/test-services';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { randomSecret, startNotesServer } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { ask, confirm, notesLeft, seedWorkspace } from './confirm.js';

const postgres = await postgresReachable();
const redis = await redisReachable();
const tag = `${process.pid}_${Date.now().toString(36)}`;
const schema = `notes_faults_${tag}`;
const redisPrefix = `mrtr:notes-faults:${tag}:`;
const TOKEN = 'tok-alice';
const tokens = new Map([[TOKEN, 'alice']]);
const INTERNAL_ERROR = -32603;
const ignore = () => {};

afterAll(async () => {
  if (postgres) await dropSchema(schema);
  if (redis) await deleteKeys(redisPrefix);
});

/**
 * A notes database on the server whose transactions run `beforeStatement`
 * before each statement, on the connection's backend pid: a test kills the
 * backend at an exact point with `pg_terminate_backend`.
 */
async function faultyDatabase(
  beforeStatement: (sql: string, pid: number) => Promise<void>,
): Promise<{ db: Database; pool: pg.Pool }> {
  const pool = new pg.Pool({
    connectionString: POSTGRES_URL,
    max: 4,
    options: `-c search_path=${schema}`,
  });
  pool.on('error', () => {});
  const driver = pgPoolDriver({
    query: (sql, params) => pool.query(sql, params),
    async connect() {
      const client = await pool.connect();
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]
        ?.pid as number;
      let order: Promise<void> = Promise.resolve();
      return {
        // Statements keep the order they were issued in, as on a real connection.
        query(sql: string, params?: unknown[]) {
          const sent = order
            .then(() => beforeStatement(sql, pid))
            .then(() => client.query(sql, params));
          order = sent.then(ignore, ignore);
          return sent;
        },
        release: (destroy) => client.release(destroy),
        on: (event, listener) => client.on(event, listener),
        off: (event, listener) => client.off(event, listener),
      };
    },
  });
  return { db: { ...driver, description: 'faulty', close: () => pool.end() }, pool };
}

describe.skipIf(!postgres)('notes_delete when PostgreSQL terminates the connection', () => {
  it('pg_terminate_backend between the claim and the commit: JSON-RPC error, note kept, no claim left; the same ticket then deletes once', async () => {
    // Create the schema and tables through a healthy database first.
    const healthy = await openDatabase(POSTGRES_URL, { searchPath: schema });
    const setup = await startNotesServer({ db: healthy, tokens, secret: randomSecret() });
    await setup.close();

    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    let armed = false;
    const seen: string[] = [];
    const { db } = await faultyDatabase(async (sql, pid) => {
      // The outcome is recorded after the claim and after the DELETE, just before COMMIT.
      if (armed && /^UPDATE "mrtr_replay" SET outcome/.test(sql.trim())) {
        armed = false;
        seen.push('terminated');
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      } else if (armed) {
        seen.push(sql.trim().split(/\s+/).slice(0, 2).join(' '));
      }
    });
    const secret = randomSecret();
    const server = await startNotesServer({ db, tokens, secret });
    try {
      const { uri, ids } = await seedWorkspace(healthy, 'alice');
      const { requestState, candidates } = await ask(server.url, TOKEN, uri);
      const chosen = candidates[0] as string;

      armed = true;
      const failed = await confirm(server.url, TOKEN, uri, requestState, chosen);
      // Reads before the transaction (the live question) come first; from BEGIN on:
      expect(seen.slice(seen.indexOf('BEGIN'))).toEqual([
        'BEGIN',
        'INSERT INTO',
        'SELECT 1',
        'SELECT *',
        'DELETE FROM',
        'terminated',
      ]);
      expect(failed.result).toBeUndefined();
      expect(failed.error.code).toBe(INTERNAL_ERROR);
      // Nothing half-done: the delete rolled back with the claim.
      expect(await notesLeft(healthy, uri)).toEqual([...ids].sort());
      const claims = await healthy.query('SELECT nonce FROM mrtr_replay');
      const before = claims.rows.length;

      // The same ticket and answer again: the contract says it performs now, once.
      const retried = await confirm(server.url, TOKEN, uri, requestState, chosen);
      expect(retried.result).toMatchObject({
        isError: false,
        structuredContent: { deleted: { id: chosen } },
      });
      expect(await notesLeft(healthy, uri)).toEqual(ids.filter((id) => id !== chosen).sort());
      expect((await healthy.query('SELECT nonce FROM mrtr_replay')).rows.length).toBe(before + 1);
      const again = await confirm(server.url, TOKEN, uri, requestState, chosen);
      expect(again.result).toEqual(retried.result);
      expect(await notesLeft(healthy, uri)).toHaveLength(2);
    } finally {
      await server.close();
      await db.close();
      await healthy.close();
      await admin.end();
    }
  });
});

describe.skipIf(!redis)('notes_delete when Redis is unreachable at claim time', () => {
  it('fails closed with a JSON-RPC error, deletes nothing, claims nothing; once Redis is back the same ticket deletes once', async () => {
    const proxy = new FaultProxy(REDIS_URL);
    await proxy.start();
    const store = await RedisReplayStore.connect(proxy.url(REDIS_URL), {
      keyPrefix: redisPrefix,
      durability: 'volatile', // the shared test Redis keeps no AOF
      timeoutMs: 500,
    });
    const db = await openDatabase('memory://');
    const server = await startNotesServer({ db, tokens, secret: randomSecret(), store });
    try {
      const { uri, ids } = await seedWorkspace(db, 'alice');
      const { requestState, candidates } = await ask(server.url, TOKEN, uri);
      const chosen = candidates[2] as string;

      await proxy.stop();
      const failed = await confirm(server.url, TOKEN, uri, requestState, chosen);
      expect(failed.result).toBeUndefined();
      expect(failed.error.code).toBe(INTERNAL_ERROR);
      expect(await notesLeft(db, uri)).toEqual([...ids].sort());

      await proxy.start();
      await new Promise<void>((resolve) => {
        if (store.client.status === 'ready') resolve();
        else store.client.once('ready', () => resolve());
      });
      // Nothing was claimed while Redis was away.
      expect(await store.client.keys(`${redisPrefix}*`)).toEqual([]);
      const retried = await confirm(server.url, TOKEN, uri, requestState, chosen);
      expect(retried.result).toMatchObject({
        isError: false,
        structuredContent: { deleted: { id: chosen } },
      });
      const again = await confirm(server.url, TOKEN, uri, requestState, chosen);
      expect(again.result).toEqual(retried.result);
      expect(await notesLeft(db, uri)).toEqual(ids.filter((id) => id !== chosen).sort());
    } finally {
      await server.close();
      await store.close();
      await proxy.stop();
      await db.close();
    }
  });
});
