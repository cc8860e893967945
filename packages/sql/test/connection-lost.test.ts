/**
 * A lost connection never ends the process: `pgPoolDriver` gives the pool and
 * every client it creates an `'error'` listener, and a transaction whose
 * backend was terminated rejects with `ConnectionLostError`. The pools here
 * have no `'error'` listener of their own: without the driver's, each
 * termination below is an unhandled `'error'` event, which fails the run.
 * Only the tests' own backends are terminated.
 */
import { FaultProxy, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectionLostError,
  causeChain,
  isConnectionError,
  isOutcomeUnknown,
  NoConnectionError,
  pgPoolDriver,
} from '../src/index.js';

const reachable = await postgresReachable();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await sleep(10);
  if (!done()) throw new Error(`timed out waiting for ${what}`);
}

const pidOf = async (q: { query: pg.Pool['query'] | pg.PoolClient['query'] }) =>
  (
    (await (q as pg.Pool).query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0] as {
      pid: number;
    }
  ).pid;

describe('isConnectionError', () => {
  const coded = (code: string) => Object.assign(new Error('x'), { code });
  it.each([
    ['57P01 (pg_terminate_backend)', coded('57P01')],
    ['57P02', coded('57P02')],
    ['class 08', coded('08006')],
    ['ECONNRESET', coded('ECONNRESET')],
    ['ECONNREFUSED', coded('ECONNREFUSED')],
    ['Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['not queryable', new Error('Client has encountered a connection error and is not queryable')],
    ['a ConnectionLostError', new ConnectionLostError('08006', { cause: new Error('x') })],
    ['a cause', new Error('wrapped', { cause: coded('57P01') })],
    ['a NoConnectionError', new NoConnectionError('08004', { cause: new Error('x') })],
    [
      'a FATAL at the start of a session (55000: not accepting connections)',
      Object.assign(coded('55000'), { severity: 'FATAL' }),
    ],
    ['53300 too many connections (FATAL)', Object.assign(coded('53300'), { severity: 'FATAL' })],
    ['a PANIC', Object.assign(coded('XX000'), { severity: 'PANIC' })],
  ])('is true for %s', (_, error) => {
    expect(isConnectionError(error)).toBe(true);
  });

  it.each([
    ['a unique violation', coded('23505')],
    ['a serialization failure', coded('40001')],
    ['a syntax error', coded('42601')],
    // 55000 is also a statement's error (currval before nextval): only its FATAL form ends the session.
    ['55000 as a statement error', Object.assign(coded('55000'), { severity: 'ERROR' })],
    ['a plain error', new Error('the action failed')],
    ['a string', 'Connection terminated'],
    ['undefined', undefined],
  ])('is false for %s', (_, error) => {
    expect(isConnectionError(error)).toBe(false);
  });
});

describe('isOutcomeUnknown and causeChain', () => {
  const lost = (code: '08006' | '08007') =>
    new ConnectionLostError(code, { cause: new Error('x') });
  it('finds a 08007 through wrapping errors, and only a 08007', () => {
    expect(isOutcomeUnknown(lost('08007'))).toBe(true);
    expect(isOutcomeUnknown(new Error('worded', { cause: lost('08007') }))).toBe(true);
    expect(isOutcomeUnknown(new Error('worded', { cause: lost('08006') }))).toBe(false);
    expect(isOutcomeUnknown('08007')).toBe(false);
  });
  it('ends a cyclic chain after 8 errors', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect([...causeChain(a)].map((e) => e.message)).toEqual([
      'a',
      'b',
      'a',
      'b',
      'a',
      'b',
      'a',
      'b',
    ]);
  });
});

describe('pgPoolDriver: what a lost connection says of the transaction', () => {
  const coded = (message: string, code: string, severity?: string) =>
    Object.assign(new Error(message), severity ? { code, severity } : { code });
  const lost = new Error('Connection terminated unexpectedly');
  const unsent = new Error('Client has encountered a connection error and is not queryable');
  /** A client whose pipelined UPDATE fails with `updateError` once COMMIT is queued, which fails with `commitError`. */
  function poolOf(updateError: Error, commitError: Error) {
    let failUpdate: (e: Error) => void = () => {};
    const client = {
      query(sql: string) {
        if (sql === 'UPDATE')
          return new Promise((_, reject) => {
            failUpdate = reject;
          });
        if (sql === 'COMMIT') {
          failUpdate(updateError);
          return Promise.reject(commitError);
        }
        if (sql === 'ROLLBACK') return Promise.reject(unsent);
        return Promise.resolve({ rows: [] });
      },
      release() {},
      on() {},
      off() {},
    };
    return { query: async () => ({ rows: [] }), connect: async () => client };
  }
  it.each([
    ["a pooler's FATAL 08P01", coded('server conn crashed?', '08P01', 'FATAL'), lost, '08007'],
    ['EPIPE (five characters, not a SQLSTATE)', coded('write EPIPE', 'EPIPE'), lost, '08007'],
    [
      'a terminated backend (FATAL 57P01)',
      coded('terminating connection', '57P01', 'FATAL'),
      lost,
      '08007',
    ],
    ['an error without a severity', coded('odd', '23505'), lost, '08007'],
    [
      'a refusal by the server (ERROR 23505)',
      coded('duplicate key', '23505', 'ERROR'),
      lost,
      '08006',
    ],
    ['COMMIT never sent', lost, unsent, '08006'],
  ])('the statement before COMMIT failed with %s', async (_, updateError, commitError, code) => {
    const driver = pgPoolDriver(poolOf(updateError, commitError) as never);
    const error = await driver
      .transaction(async (tx) => {
        await tx.query('INSERT');
        tx.query('UPDATE').catch(() => {}); // pipelined, as PostgresReplayStore sends its outcome
        return 'done';
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionLostError);
    expect(error).toMatchObject({ code });
  });
});

describe('pgPoolDriver: a COMMIT that gets no answer of the server', () => {
  it("is 08007 (it may have committed) when the client gave up on it (pg's query_timeout)", async () => {
    const sent: string[] = [];
    let released: unknown = 'not released';
    const client = {
      query(sql: string) {
        sent.push(sql);
        if (sql === 'COMMIT') return Promise.reject(new Error('Query read timeout'));
        return Promise.resolve({ rows: [] });
      },
      release(error?: unknown) {
        released = error;
      },
      on() {},
      off() {},
    };
    const driver = pgPoolDriver({ query: async () => ({ rows: [] }), connect: async () => client });
    const error = await driver.transaction(async (tx) => tx.query('UPDATE')).catch((e) => e);
    expect(error).toBeInstanceOf(ConnectionLostError);
    expect(error).toMatchObject({ code: '08007' });
    expect(sent).not.toContain('ROLLBACK'); // nothing more on a client whose COMMIT is unaccounted for
    expect(released).toBeInstanceOf(Error); // discarded, not returned to the pool
  });

  it('stays a plain failure when the server refused COMMIT (a deferred constraint: ERROR 23505)', async () => {
    const refusal = Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' });
    const client = {
      query: (sql: string) =>
        sql === 'COMMIT' ? Promise.reject(refusal) : Promise.resolve({ rows: [] }),
      release() {},
      on() {},
      off() {},
    };
    const driver = pgPoolDriver({ query: async () => ({ rows: [] }), connect: async () => client });
    const error = await driver.transaction(async (tx) => tx.query('UPDATE')).catch((e) => e);
    expect(error).toBe(refusal);
  });
});

describe.skipIf(!reachable)('pgPoolDriver when no connection can be opened', () => {
  // A database of this test's own that refuses connections: PostgreSQL answers the start of
  // each session with FATAL 55000, as it does for `ALTER DATABASE … ALLOW_CONNECTIONS false`.
  const closed = `mrtr_sql_closed_${process.pid}_${Date.now().toString(36)}`;
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${closed} ALLOW_CONNECTIONS false`);
  });
  afterAll(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS ${closed}`);
    await admin?.end();
  });
  const urlOf = (database: string) => {
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${database}`;
    return url.href;
  };

  it.each([
    ['a database that refuses connections (FATAL 55000)', () => urlOf(closed), '08004', '55000'],
    [
      'a database that does not exist (FATAL 3D000)',
      () => urlOf(`${closed}_none`),
      '08004',
      '3D000',
    ],
    [
      'a port where nothing listens',
      () => 'postgres://postgres@127.0.0.1:1/test',
      '08001',
      'ECONNREFUSED',
    ],
  ])('%s: a statement and a transaction reject with NoConnectionError, the pool error as cause', async (_, url, code, causeCode) => {
    const pool = new pg.Pool({ connectionString: url(), max: 1 });
    const driver = pgPoolDriver(pool, { timeoutMs: 5000 });
    let ran = false;
    for (const work of [
      driver.query('SELECT 1'),
      driver.transaction(async () => {
        ran = true;
      }),
    ]) {
      const error = await work.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(NoConnectionError);
      expect(error).toMatchObject({ code, cause: { code: causeCode } });
      expect(isConnectionError(error)).toBe(true);
    }
    expect(ran).toBe(false);
    await pool.end();
  });
});

describe.skipIf(!reachable)('pgPoolDriver when PostgreSQL terminates its backends', () => {
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
  });
  const terminate = (pid: number) => admin.query('SELECT pg_terminate_backend($1)', [pid]);

  for (const pipeline of [false, true]) {
    const pooled = () => new pg.Pool({ connectionString: POSTGRES_URL, max: 1, pipeline });
    const kind = pipeline ? ' (pipelined pool)' : '';

    it(`a checked-out client whose backend dies between statements is reported, not thrown${kind}`, async () => {
      const pool = pooled();
      const seen: unknown[] = [];
      pgPoolDriver(pool, { onConnectionError: (e) => seen.push(e) });
      const client = await pool.connect();
      const ended = new Promise((resolve) => client.once('end', resolve));
      await terminate(await pidOf(client));
      await ended;
      expect(seen.some(isConnectionError)).toBe(true);
      client.release(true);
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await pool.end();
    });

    it(`an idle client whose backend dies is reported, even by a reporter that throws${kind}`, async () => {
      const pool = pooled();
      let reported = 0;
      pgPoolDriver(pool, {
        onConnectionError: () => {
          reported++;
          throw new Error('a careless reporter');
        },
      });
      await terminate(await pidOf(pool));
      await until(() => reported > 0 && pool.totalCount === 0, 'the pool to drop the client');
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await pool.end();
    });

    it(`a transaction whose backend dies rejects with ConnectionLostError 08006; the pool recovers${kind}`, async () => {
      const pool = pooled();
      const driver = pgPoolDriver(pool);
      const error = await driver
        .transaction(async (tx) => {
          await terminate(await pidOf(tx as never));
          await sleep(50);
          await tx.query('SELECT 1');
          return 'committed';
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionLostError);
      expect(error).toMatchObject({ code: '08006' });
      expect(isConnectionError((error as Error).cause)).toBe(true);
      // With max 1, a dead client returned to the pool would fail this.
      expect(
        await driver.transaction(async (tx) => (await tx.query('SELECT 2 AS two')).rows),
      ).toEqual([{ two: 2 }]);
      await pool.end();
    });
  }

  it('a second driver on the same pool adds no second listener', () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    pgPoolDriver(pool);
    const listeners = pool.listenerCount('error') + pool.listenerCount('connect');
    pgPoolDriver(pool);
    expect(pool.listenerCount('error') + pool.listenerCount('connect')).toBe(listeners);
    return pool.end();
  });

  it('an error thrown by fn on a healthy connection is rethrown unchanged', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    const driver = pgPoolDriver(pool);
    const mine = new Error('the action failed');
    await expect(
      driver.transaction(async (tx) => {
        await tx.query('SELECT 1');
        throw mine;
      }),
    ).rejects.toBe(mine);
    await pool.end();
  });
});

describe.skipIf(!reachable)('pgPoolDriver when the connection breaks with COMMIT in flight', () => {
  const TABLE = `sql_commit_drop_${process.pid}`;
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (id text PRIMARY KEY, state text)`);
  });
  afterAll(async () => {
    await admin?.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await admin?.end();
  });

  for (const pipeline of [false, true]) {
    const kind = pipeline ? ' (pipelined pool)' : '';
    it(`gives 08007 (outcome unknown) when the connection breaks after COMMIT was sent${pipeline ? ', the statement pipelined before it unanswered' : ''}; the transaction committed${kind}`, async () => {
      const relay = new FaultProxy(POSTGRES_URL);
      await relay.start();
      const pool = new pg.Pool({ connectionString: relay.url(POSTGRES_URL), max: 1, pipeline });
      const driver = pgPoolDriver(pool, { timeoutMs: 5000 });
      const id = `row-${pipeline}`;
      const error = await driver
        .transaction(async (tx) => {
          await tx.query(`INSERT INTO ${TABLE} (id, state) VALUES ($1, 'claimed')`, [id]);
          relay.cutAfter('COMMIT'); // PostgreSQL commits; the answer never comes back
          // Not awaited, as PostgresReplayStore sends its outcome: COMMIT follows right behind it.
          tx.query(`UPDATE ${TABLE} SET state = 'done' WHERE id = $1`, [id]).catch(() => {});
          return 'done';
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionLostError);
      expect(error).toMatchObject({ code: '08007' });
      let rows: { state: string }[] = [];
      for (let i = 0; i < 50 && rows.length === 0; i++) {
        await sleep(20);
        rows = (
          await admin.query<{ state: string }>(`SELECT state FROM ${TABLE} WHERE id = $1`, [id])
        ).rows;
      }
      expect(rows).toEqual([{ state: 'done' }]);
      await pool.end();
      await relay.stop();
    });
  }
});
