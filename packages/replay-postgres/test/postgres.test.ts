import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { type OnceRequest, ReplayStoreUnavailableError } from '@mrtr/replay';
import {
  ConnectionLostError,
  type PgPoolLike,
  pgliteDriver,
  pgPoolDriver,
  type SqlDriver,
  type SqlQueryable,
} from '@mrtr/sql';
import {
  dropSchema,
  FaultProxy,
  POSTGRES_URL,
  poolInSchema,
  postgresReachable,
} from '@mrtr/test-services';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateReplayTable, PostgresReplayStore } from '../src/index.js';

const reachable = await postgresReachable();
const schema = `replay_pg_${process.pid}_${Date.now().toString(36)}`;
const ignore = () => {};
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function onceRequest(overrides: Partial<OnceRequest> = {}): OnceRequest {
  return {
    nonce: randomUUID(),
    requestDigest: 'sha256:answer-a',
    expiresAt: Date.now() + 300_000,
    ...overrides,
  };
}

async function itemCount(q: SqlQueryable, nonce: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM items WHERE nonce = $1',
    [nonce],
  );
  return Number(rows[0]?.n);
}

async function replayRow(q: SqlQueryable, nonce: string) {
  const { rows } = await q.query<{ request_digest: string; outcome: string | null }>(
    'SELECT request_digest, outcome FROM mrtr_replay WHERE nonce = $1',
    [nonce],
  );
  return rows[0];
}

/** The mutation the tests guard: insert one row tagged with the nonce. */
const insertItem = (tx: SqlQueryable, nonce: string) =>
  tx.query('INSERT INTO items (nonce) VALUES ($1)', [nonce]);

interface Backend {
  name: string;
  skip: boolean;
  driver(): SqlDriver;
}

let pool: pg.Pool | undefined;
let pipelined: pg.Pool | undefined;
let lite: PGlite | undefined;
const backends: Backend[] = [
  { name: 'PostgreSQL', skip: !reachable, driver: () => pgPoolDriver(pool as pg.Pool) },
  {
    name: 'PostgreSQL, pipelined pool',
    skip: !reachable,
    driver: () => pgPoolDriver(pipelined as pg.Pool),
  },
  { name: 'PGlite', skip: false, driver: () => pgliteDriver(lite as PGlite) },
];

beforeAll(async () => {
  lite = await PGlite.create();
  if (reachable) pool = await poolInSchema(schema);
  if (reachable) pipelined = await poolInSchema(schema, 10, true);
  for (const b of backends.filter((b) => !b.skip)) {
    await migrateReplayTable(b.driver());
    await b.driver().query('CREATE TABLE IF NOT EXISTS items (nonce text NOT NULL)');
  }
});

afterAll(async () => {
  await pool?.end();
  await pipelined?.end();
  await lite?.close();
  if (reachable) await dropSchema(schema);
});

describe('migrateReplayTable and options', () => {
  it('rejects a table name that is not a plain identifier with TypeError, before any SQL', async () => {
    const driver: SqlDriver = {
      query: () => Promise.reject(new Error('must not be called')),
      transaction: () => Promise.reject(new Error('must not be called')),
    };
    for (const table of ['bad-name', 'a.b.c', 'x"; DROP TABLE notes; --', '', 'Upper'])
      await expect(migrateReplayTable(driver, { table })).rejects.toThrow(TypeError);
    expect(() => new PostgresReplayStore(driver, { table: 'no spaces' })).toThrow(TypeError);
  });

  it('is idempotent on PGlite', async () => {
    const db = await PGlite.create();
    const driver = pgliteDriver(db);
    await migrateReplayTable(driver);
    await migrateReplayTable(driver);
    const { rows } = await db.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'mrtr_replay' ORDER BY indexname",
    );
    expect(rows.map((r) => r.indexname)).toEqual(['mrtr_replay_expires_at', 'mrtr_replay_pkey']);
    await db.close();
  });

  it.skipIf(!reachable)('is safe to run concurrently from five pools on one server', async () => {
    const fresh = `${schema}_mig`;
    const pools: pg.Pool[] = [];
    for (let i = 0; i < 5; i++) pools.push(await poolInSchema(fresh, 1));
    try {
      await Promise.all(pools.map((p) => migrateReplayTable(pgPoolDriver(p))));
      const { rows } = await (pools[0] as pg.Pool).query<{ indexname: string }>(
        'SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
        [fresh],
      );
      expect(rows.map((r) => r.indexname)).toEqual(['mrtr_replay_expires_at', 'mrtr_replay_pkey']);
    } finally {
      for (const p of pools) await p.end();
      await dropSchema(fresh);
    }
  });

  it('a table name of 63 characters still gets its expiry index (a name PostgreSQL would cut)', async () => {
    const db = await PGlite.create();
    const driver = pgliteDriver(db);
    const table = `r${'e'.repeat(62)}`;
    await migrateReplayTable(driver, { table });
    await migrateReplayTable(driver, { table }); // idempotent
    const { rows } = await db.query<{ indexname: string; indexdef: string }>(
      'SELECT indexname, indexdef FROM pg_indexes WHERE tablename = $1 ORDER BY indexname',
      [table],
    );
    expect(rows.map((r) => r.indexdef.replace(/^.* USING btree /, ''))).toEqual(
      expect.arrayContaining(['(expires_at)', '(nonce)']),
    );
    expect(rows).toHaveLength(2);
    await db.close();
  });

  it('uses a schema-qualified custom table', async () => {
    const db = await PGlite.create();
    const driver = pgliteDriver(db);
    await db.query('CREATE SCHEMA ops');
    await migrateReplayTable(driver, { table: 'ops.confirmations' });
    const store = new PostgresReplayStore(driver, { table: 'ops.confirmations' });
    const c = onceRequest();
    expect(await store.once(c, async () => 'ok')).toEqual({ status: 'performed', outcome: 'ok' });
    const { rows } = await db.query('SELECT nonce FROM ops.confirmations');
    expect(rows).toEqual([{ nonce: c.nonce }]);
    await db.close();
  });
});

for (const backend of backends) {
  describe.skipIf(backend.skip)(`PostgresReplayStore on ${backend.name}`, () => {
    it('withClaim: the claim and the caller’s mutation commit together', async () => {
      const driver = backend.driver();
      const store = new PostgresReplayStore(driver);
      const c = onceRequest();
      const result = await driver.transaction((tx) =>
        store.withClaim(tx, c, async (t) => {
          await insertItem(t, c.nonce);
          return { inserted: c.nonce };
        }),
      );
      expect(result).toEqual({ status: 'performed', outcome: { inserted: c.nonce } });
      expect(await itemCount(driver, c.nonce)).toBe(1);
      expect(await replayRow(driver, c.nonce)).toEqual({
        request_digest: 'sha256:answer-a',
        outcome: JSON.stringify({ inserted: c.nonce }),
      });
    });

    it('withClaim: when the caller’s transaction rolls back, the claim goes with the mutation; a retry performs', async () => {
      const driver = backend.driver();
      const store = new PostgresReplayStore(driver);
      const c = onceRequest();
      const late = new Error('failed after the claim');
      await expect(
        driver.transaction(async (tx) => {
          await store.withClaim(tx, c, async (t) => {
            await insertItem(t, c.nonce);
            return 'inserted';
          });
          throw late; // e.g. an audit write after the mutation failed
        }),
      ).rejects.toBe(late);
      expect(await itemCount(driver, c.nonce)).toBe(0);
      expect(await replayRow(driver, c.nonce)).toBeUndefined();
      const retry = await driver.transaction((tx) =>
        store.withClaim(tx, c, async (t) => {
          await insertItem(t, c.nonce);
          return 'inserted';
        }),
      );
      expect(retry).toEqual({ status: 'performed', outcome: 'inserted' });
      expect(await itemCount(driver, c.nonce)).toBe(1);
    });

    it('inTransaction: a refused action takes its claim back without aborting the caller’s transaction; a claim that runs commits with it, once', async () => {
      const driver = backend.driver();
      const store = new PostgresReplayStore(driver);
      const refused = onceRequest();
      const used = onceRequest();
      const stale = new Error('target gone');
      const committed = await driver.transaction(async (tx) => {
        await insertItem(tx, 'caller-before');
        const inner = store.inTransaction(tx);
        await expect(
          inner.once(refused, async (t) => {
            await insertItem(t, refused.nonce);
            throw stale;
          }),
        ).rejects.toBe(stale);
        // The transaction still works, and the refused claim's row and write are gone.
        const ran = await inner.once(used, async (t) => {
          await insertItem(t, used.nonce);
          return 'inserted';
        });
        await insertItem(tx, 'caller-after');
        return ran;
      });
      expect(committed).toEqual({ status: 'performed', outcome: 'inserted' });
      expect(await itemCount(driver, 'caller-before')).toBeGreaterThanOrEqual(1);
      expect(await itemCount(driver, 'caller-after')).toBeGreaterThanOrEqual(1);
      expect(await itemCount(driver, refused.nonce)).toBe(0);
      expect(await replayRow(driver, refused.nonce)).toBeUndefined();
      expect(await itemCount(driver, used.nonce)).toBe(1);
      // Presented again, in the store's own transaction or in another caller's: never runs again.
      let again = 0;
      expect(await store.once(used, async () => ++again)).toEqual({
        status: 'replayed',
        outcome: 'inserted',
      });
      const inOther = await driver.transaction((tx) =>
        store
          .inTransaction(tx)
          .once({ ...used, requestDigest: 'sha256:other' }, async () => ++again),
      );
      expect(inOther.status).toBe('refused');
      expect(again).toBe(0);
    });

    it('inTransaction: an action whose statement failed (the transaction aborted) is taken back to the savepoint; the caller goes on', async () => {
      const driver = backend.driver();
      const store = new PostgresReplayStore(driver);
      const failed = onceRequest();
      const after = onceRequest();
      const result = await driver.transaction(async (tx) => {
        const inner = store.inTransaction(tx);
        const error = await inner
          .once(failed, async (t) => {
            await insertItem(t, failed.nonce);
            await t.query('SELECT 1/0');
            return 'never';
          })
          .catch((e: unknown) => e);
        expect((error as { code?: string }).code).toBe('22012'); // division_by_zero, as thrown
        return inner.once(after, async (t) => {
          await insertItem(t, after.nonce);
          return 'inserted';
        });
      });
      expect(result).toEqual({ status: 'performed', outcome: 'inserted' });
      expect(await itemCount(driver, failed.nonce)).toBe(0);
      expect(await replayRow(driver, failed.nonce)).toBeUndefined();
      expect(await itemCount(driver, after.nonce)).toBe(1);
    });

    it("inTransaction: a claim that cannot be taken back (ROLLBACK TO SAVEPOINT fails) is the store's failure, with the action's error as cause", async () => {
      const driver = backend.driver();
      const store = new PostgresReplayStore(driver);
      const c = onceRequest();
      const stale = new Error('target gone');
      const error = await driver
        .transaction(async (tx) => {
          const lossy: SqlQueryable = {
            query: (sql, params) =>
              sql.startsWith('ROLLBACK TO')
                ? Promise.reject(new Error('connection lost'))
                : tx.query(sql, params),
          };
          await store.inTransaction(lossy).once(c, async () => {
            throw stale;
          });
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
      expect((error as Error).message).toContain('could not take its claim back');
      expect((error as Error).cause).toBe(stale);
      expect(await replayRow(driver, c.nonce)).toBeUndefined(); // the caller rolled back
    });

    it('once: an action that throws rolls back its own writes with the claim and is rethrown unchanged', async () => {
      const driver = backend.driver();
      const store = new PostgresReplayStore(driver);
      const c = onceRequest();
      const boom = new Error('stale target');
      await expect(
        store.once(c, async (tx) => {
          await insertItem(tx, c.nonce);
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await itemCount(driver, c.nonce)).toBe(0);
      expect(await replayRow(driver, c.nonce)).toBeUndefined();
    });

    it('once: an action that returns a non-JSON value is a TypeError and nothing is committed', async () => {
      const driver = backend.driver();
      const store = new PostgresReplayStore(driver);
      const c = onceRequest();
      await expect(
        store.once(c, (async (tx: SqlQueryable) => {
          await insertItem(tx, c.nonce);
          return undefined;
        }) as never),
      ).rejects.toThrow(TypeError);
      expect(await itemCount(driver, c.nonce)).toBe(0);
      expect(await replayRow(driver, c.nonce)).toBeUndefined();
    });

    it('a presentation blocked behind an open claim performs when the first transaction rolls back', async () => {
      const driver = backend.driver();
      const [a, b] = [new PostgresReplayStore(driver), new PostgresReplayStore(driver)];
      const c = onceRequest();
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const boom = new Error('first attempt failed');
      let entered!: () => void;
      const claimed = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const first = a.once(c, async (tx) => {
        await insertItem(tx, c.nonce);
        entered(); // the claim row is written; the transaction stays open
        await held;
        throw boom;
      });
      await claimed; // not sleep(50): under load the second claim could land first
      const second = b.once(c, async (tx) => {
        await insertItem(tx, c.nonce);
        return 'second';
      });
      await sleep(50);
      release();
      await expect(first).rejects.toBe(boom);
      expect(await second).toEqual({ status: 'performed', outcome: 'second' });
      expect(await itemCount(driver, c.nonce)).toBe(1);
    });

    it('replays the outcome exactly as recorded, key order included', async () => {
      const store = new PostgresReplayStore(backend.driver());
      const c = onceRequest();
      const outcome = { zeta: 1, alpha: [{ b: 2, a: 1 }], ü: 'ß\u0000end' };
      await store.once(c, async () => outcome);
      const replayed = await store.once(c, async () => null);
      expect(replayed.status).toBe('replayed');
      if (replayed.status === 'replayed')
        expect(JSON.stringify(replayed.outcome)).toBe(JSON.stringify(outcome));
    });

    it('a nonce whose row has expired is claimed again (takeover); one that has not is refused', async () => {
      const driver = backend.driver();
      const t0 = Date.now();
      const first = onceRequest({ expiresAt: t0 + 1_000 });
      await new PostgresReplayStore(driver).once(first, async () => 'first');
      const again = { ...first, requestDigest: 'sha256:answer-b', expiresAt: t0 + 60_000 };
      const early = new PostgresReplayStore(driver, { now: () => t0 + 999 });
      expect(await early.once(again, async () => 'early')).toEqual({
        status: 'refused',
        reason: 'used',
      });
      let runs = 0;
      const late = new PostgresReplayStore(driver, { now: () => t0 + 1_000 });
      const taken = await Promise.all(
        [1, 2, 3].map(() =>
          late.once(again, async (tx) => {
            runs++;
            await insertItem(tx, first.nonce);
            return 'taken over';
          }),
        ),
      );
      expect(runs).toBe(1);
      expect(taken.map((r) => r.status).sort()).toEqual(['performed', 'replayed', 'replayed']);
      expect(await itemCount(driver, first.nonce)).toBe(1);
      expect(await replayRow(driver, first.nonce)).toEqual({
        request_digest: 'sha256:answer-b',
        outcome: '"taken over"',
      });
    });

    it('a claim that meets an expired row a sweep deletes meanwhile claims the freed nonce', async () => {
      const driver = backend.driver();
      const t0 = Date.now();
      const first = onceRequest({ expiresAt: t0 + 1_000 });
      const store = new PostgresReplayStore(driver, { now: () => t0 + 2_000 });
      await store.once(first, async () => 'first');
      // The sweep runs between the claim's INSERT (which met the expired row) and its takeover.
      let swept = false;
      const racing: SqlDriver = {
        ...driver,
        transaction: (fn) =>
          driver.transaction((tx) =>
            fn({
              query: async (sql: string, params?: unknown[]) => {
                const result = await tx.query(sql, params);
                if (!swept && /ON CONFLICT \(nonce\) DO NOTHING/.test(sql)) {
                  swept = true;
                  await tx.query('DELETE FROM mrtr_replay WHERE nonce = $1', [first.nonce]);
                }
                return result;
              },
            } as SqlQueryable),
          ),
      };
      const again = { ...first, requestDigest: 'sha256:answer-b', expiresAt: t0 + 60_000 };
      const result = await new PostgresReplayStore(racing, { now: () => t0 + 2_000 }).once(
        again,
        async () => 'second',
      );
      expect(swept).toBe(true);
      expect(result).toEqual({ status: 'performed', outcome: 'second' });
      expect((await replayRow(driver, first.nonce))?.outcome).toBe('"second"');
    });

    it('sweep deletes only rows expired at the given time', async () => {
      const driver = backend.driver();
      const store = new PostgresReplayStore(driver);
      const t0 = Date.now() + 3_600_000; // later than any other test's entry
      const soon = onceRequest({ expiresAt: t0 + 1_000 });
      const later = onceRequest({ expiresAt: t0 + 2_000 });
      await store.once(soon, async () => 1);
      await store.once(later, async () => 2);
      await store.sweep(t0 + 999);
      expect(await replayRow(driver, soon.nonce)).toBeDefined();
      expect(await store.sweep(t0 + 1_000)).toBeGreaterThanOrEqual(1);
      expect(await replayRow(driver, soon.nonce)).toBeUndefined();
      expect(await replayRow(driver, later.nonce)).toBeDefined();
    });

    it('a missing table fails closed with ReplayStoreUnavailableError before the action runs', async () => {
      const store = new PostgresReplayStore(backend.driver(), { table: 'no_such_table' });
      let runs = 0;
      await expect(store.once(onceRequest(), async () => ++runs)).rejects.toBeInstanceOf(
        ReplayStoreUnavailableError,
      );
      expect(runs).toBe(0);
    });
  });
}

/**
 * A pool whose clients run `beforeStatement` before each statement they
 * send, so a test can kill the backend at an exact point of the transaction.
 */
function faultyPool(
  inner: pg.Pool,
  beforeStatement: (sql: string, pid: number, client: pg.PoolClient) => Promise<void>,
): PgPoolLike {
  return {
    query: (sql, params) => inner.query(sql, params),
    async connect() {
      const client = await inner.connect();
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const pid = (rows[0] as { pid: number }).pid;
      let order: Promise<void> = Promise.resolve();
      return {
        // Statements keep the order they were issued in, as on a real connection.
        query(sql: string, params?: unknown[]) {
          const sent = order
            .then(() => beforeStatement(sql, pid, client))
            .then(() => client.query(sql, params));
          order = sent.then(ignore, ignore);
          return sent;
        },
        release: (destroy) => client.release(destroy),
        on: (event, listener) => client.on(event, listener),
        off: (event, listener) => client.off(event, listener),
      };
    },
  };
}

describe.skipIf(!reachable)('PostgresReplayStore when PostgreSQL kills the connection', () => {
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
  });

  const terminate = (pid: number) => admin.query('SELECT pg_terminate_backend($1)', [pid]);
  /**
   * A pool over `base` whose backend is terminated before the first statement starting
   * with `prefix` is sent, once node-postgres has seen the connection end; `armed()` is
   * false once that happened.
   */
  function killedAt(base: pg.Pool, prefix: string) {
    let armed = true;
    const pool = faultyPool(base, async (sql, pid, client) => {
      if (armed && sql.trimStart().startsWith(prefix)) {
        armed = false;
        const ended = new Promise((resolve) => client.once('end', resolve));
        await terminate(pid);
        // node-postgres has seen the connection end: what follows is never sent.
        await ended;
      }
    });
    return { pool, armed: () => armed };
  }

  for (const [point, piped] of [
    ['UPDATE', false],
    ['COMMIT', false],
    ['UPDATE', true],
    ['COMMIT', true],
  ] as const) {
    it(`pg_terminate_backend after the claim and the mutation, before ${point === 'UPDATE' ? 'the outcome is recorded' : 'COMMIT is sent'}${piped ? ' (pipelined pool)' : ''}: fails closed, nothing committed, a retry performs once`, async () => {
      const base = (piped ? pipelined : pool) as pg.Pool;
      const killed = killedAt(base, point);
      const store = new PostgresReplayStore(pgPoolDriver(killed.pool));
      const c = onceRequest();
      let runs = 0;
      const error = await store
        .once(c, async (tx) => {
          runs++;
          await insertItem(tx, c.nonce);
          return 'inserted';
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
      // Killed before the outcome's UPDATE or before COMMIT was sent: rolled back for sure.
      expect((error as Error).cause).toBeInstanceOf(ConnectionLostError);
      expect((error as Error).cause).toMatchObject({ code: '08006' });
      expect((error as ReplayStoreUnavailableError).outcomeUnknown).toBeFalsy();
      expect(killed.armed()).toBe(false);
      expect(runs).toBe(1);
      // Nothing half-done: neither the mutation nor the claim survived.
      expect(await itemCount(pgPoolDriver(base), c.nonce)).toBe(0);
      expect(await replayRow(pgPoolDriver(base), c.nonce)).toBeUndefined();
      // The same confirmation presented again, on a healthy connection: performs once, then replays.
      const healthy = new PostgresReplayStore(pgPoolDriver(base));
      const action = async (tx: SqlQueryable) => {
        runs++;
        await insertItem(tx, c.nonce);
        return 'inserted';
      };
      expect(await healthy.once(c, action)).toEqual({ status: 'performed', outcome: 'inserted' });
      expect(await healthy.once(c, action)).toEqual({ status: 'replayed', outcome: 'inserted' });
      expect(runs).toBe(2);
      expect(await itemCount(pgPoolDriver(base), c.nonce)).toBe(1);
    });
  }

  it('under SERIALIZABLE a concurrent identical claim fails closed, worded as a conflict and not an outage', async () => {
    const serializable = new pg.Pool({
      connectionString: POSTGRES_URL,
      max: 2,
      options: `-c search_path=${schema} -c default_transaction_isolation=serializable`,
      application_name: `replay_serializable_${process.pid}`,
    });
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const store = new PostgresReplayStore(pgPoolDriver(serializable));
      const c = onceRequest();
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let runs = 0;
      let entered!: () => void;
      const claimed = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const first = store.once(c, async (tx) => {
        runs++;
        await insertItem(tx, c.nonce);
        entered();
        await held; // the second claim arrives while this transaction is open
        return 'inserted';
      });
      await claimed; // the first claim is in, its transaction open
      // Its failure is caught at once: it may reject while `first` is still being awaited below.
      const second = store
        .once(c, async () => {
          runs++;
          return 'again';
        })
        .catch((e: unknown) => e);
      // Release only once the second claim waits on the first one's row (not after a fixed 100 ms:
      // its new connection alone can take longer on a loaded host).
      for (let i = 0; i < 1000; i++) {
        const { rows } = await admin.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
          [`replay_serializable_${process.pid}`],
        );
        if (rows[0]?.n === 1) break;
        await sleep(10);
      }
      release();
      expect(await first).toEqual({ status: 'performed', outcome: 'inserted' });
      const error = await second;
      expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
      expect((error as Error).message).toContain(
        'conflicted with a concurrent one (SQLSTATE 40001',
      );
      expect((error as Error).message).not.toContain('replay store failed');
      expect(runs).toBe(1);
      // Retried, it reads the committed record.
      expect(await store.once(c, async () => 'again')).toEqual({
        status: 'replayed',
        outcome: 'inserted',
      });
    } finally {
      await admin.end();
      await serializable.end();
    }
  });

  it("pg_terminate_backend during the action's own statement: rolled back, and the error names PostgreSQL's reason", async () => {
    const base = pool as pg.Pool;
    const killed = killedAt(base, 'INSERT INTO items');
    const store = new PostgresReplayStore(pgPoolDriver(killed.pool));
    const c = onceRequest();
    const error = await store
      .once(c, async (tx) => {
        await insertItem(tx, c.nonce);
        return 'inserted';
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
    expect((error as ReplayStoreUnavailableError).outcomeUnknown).toBeFalsy();
    expect((error as Error).cause).toMatchObject({ code: '08006' });
    // What the operator reads: the connection's own reason, never "[object Object]".
    expect((error as Error).message).not.toContain('[object Object]');
    expect((error as Error).message).toMatch(/terminat|connection/i);
    const chain: unknown[] = [];
    for (let e: unknown = error; e instanceof Error; e = e.cause) chain.push(e);
    expect(chain.length).toBeGreaterThanOrEqual(3);
    expect(killed.armed()).toBe(false);
    expect(await itemCount(pgPoolDriver(base), c.nonce)).toBe(0);
    expect(await replayRow(pgPoolDriver(base), c.nonce)).toBeUndefined();
  });

  for (const piped of [false, true]) {
    it(`the connection breaks after COMMIT was sent, its answer lost${piped ? ' (pipelined pool)' : ''}: outcome unknown, the mutation and its outcome committed, a retry replays`, async () => {
      const proxy = new FaultProxy(POSTGRES_URL);
      await proxy.start();
      const viaProxy = new pg.Pool({
        connectionString: proxy.url(POSTGRES_URL),
        max: 1,
        pipeline: piped,
        options: `-c search_path=${schema}`,
      });
      const store = new PostgresReplayStore(pgPoolDriver(viaProxy));
      const c = onceRequest();
      let runs = 0;
      const action = async (tx: SqlQueryable) => {
        runs++;
        await insertItem(tx, c.nonce);
        proxy.cutAfter('COMMIT'); // PostgreSQL commits; its answer never comes back
        return 'inserted';
      };
      const error = await store.once(c, action).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplayStoreUnavailableError);
      expect((error as Error).cause).toMatchObject({ code: '08007' });
      expect((error as ReplayStoreUnavailableError).outcomeUnknown).toBe(true);
      const base = (piped ? pipelined : pool) as pg.Pool;
      // PostgreSQL runs what came before the cut on its own schedule: on a loaded
      // host the client hears of the lost connection first, so wait up to 5 s.
      let items = 0;
      for (let i = 0; i < 200 && items === 0; i++) {
        items = await itemCount(pgPoolDriver(base), c.nonce);
        if (items === 0) await sleep(25);
      }
      expect(items).toBe(1);
      // The outcome was recorded in the same transaction: the same confirmation again replays it.
      const healthy = new PostgresReplayStore(pgPoolDriver(base));
      expect(await healthy.once(c, action)).toEqual({ status: 'replayed', outcome: 'inserted' });
      expect(runs).toBe(1);
      await viaProxy.end();
      await proxy.stop();
    });
  }

  it('a client whose backend was killed is destroyed, not returned to the pool', async () => {
    const base = await poolInSchema(schema, 1);
    let armed = true;
    const faulty = faultyPool(base, async (sql, pid) => {
      if (armed && sql.startsWith('COMMIT')) {
        armed = false;
        await terminate(pid);
      }
    });
    const store = new PostgresReplayStore(pgPoolDriver(faulty));
    await expect(store.once(onceRequest(), async () => 1)).rejects.toBeInstanceOf(
      ReplayStoreUnavailableError,
    );
    // With max 1, a broken client returned to the pool would fail this at once.
    expect(await store.once(onceRequest(), async () => 2)).toMatchObject({ status: 'performed' });
    await base.end();
  });
});
