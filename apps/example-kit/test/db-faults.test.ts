/**
 * What an example server's database says when PostgreSQL stops answering,
 * through a proxy that keeps back or cuts the answers (`pg-proxy.ts`):
 *
 * - a statement run on its own (autocommit) that reached the server may have
 *   committed: "changed nothing" for it would make the advised retry do it
 *   twice, so it says the change may or may not have been made; a read, or a
 *   statement that never got a connection, still "changed nothing";
 * - a start-up migration (`atStartUp`) that loses its connection or its
 *   deadline is told on stderr and run again, instead of failing the start;
 *   a refusal that is no outage still fails at once.
 */
import { randomBytes } from 'node:crypto';
import { McpError } from '@mrtr/wire';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { atStartUp, type Database, exampleApprovals, openDatabase } from '../src/index.js';
import { PgFaultProxy, POSTGRES_URL } from './pg-proxy.js';

/** Whether PostgreSQL answers; under `CI=true` it must (CI never goes green without these tests). */
async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (error) {
    if (process.env.CI === 'true') throw error;
    console.warn(`skipping PostgreSQL tests: ${String(error)}`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const postgres = await postgresReachable();
/** The driver's deadline (`MRTR_DB_TIMEOUT_MS`) in these tests, ms. */
const TIMEOUT_MS = 400;
const UNKNOWN_LATE =
  'The database did not answer in time: the change may or may not have been made. Check before retrying.';
const UNKNOWN_LOST =
  'The connection to the database was lost: the change may or may not have been made. Check before retrying.';
const NOTHING_LATE =
  'This request changed nothing: the database did not answer in time. Retry the request.';
const NOTHING_UNREACHABLE =
  'This request changed nothing: the database could not be reached. Retry the request.';
const NOTHING_REFUSED =
  'This request changed nothing: the database refused the connection. Retry the request.';

/** What `work` rejected with (fails the test when it resolves). */
async function rejection(work: Promise<unknown>): Promise<Error> {
  const outcome = await work.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof Error)) throw new Error(`expected a rejection, got ${String(outcome)}`);
  return outcome;
}

describe.skipIf(!postgres)(
  'the database of the example servers, when PostgreSQL stops answering',
  () => {
    const schema = `mrtr_kit_faults_${randomBytes(4).toString('hex')}`;
    let proxy: PgFaultProxy;
    let db: Database;
    /** A connection of the test's own, straight to PostgreSQL: what really committed. */
    let direct: pg.Client;

    const open = () => openDatabase(proxy.url(), { searchPath: schema, timeoutMs: TIMEOUT_MS });
    const deploys = async () =>
      Number(
        (await direct.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.deploys`)).rows[0]
          ?.n,
      );

    /**
     * The count of deploys once a statement the proxy passed on has had time
     * to commit: PostgreSQL runs it on its own schedule, and on a loaded host
     * the client can hear of the lost connection first. Polls up to 5 s for
     * `expected`, then returns what it counts.
     */
    const deploysOnceSettled = async (expected: number) => {
      const deadline = Date.now() + 5000;
      let count = await deploys();
      while (count !== expected && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        count = await deploys();
      }
      return count;
    };

    beforeAll(async () => {
      proxy = new PgFaultProxy();
      await proxy.start();
      db = await open();
      await db.query('CREATE TABLE deploys (id serial PRIMARY KEY, ref text NOT NULL)');
      direct = new pg.Client({ connectionString: POSTGRES_URL });
      direct.on('error', () => {});
      await direct.connect();
    });

    afterAll(async () => {
      await db?.close().catch(() => {});
      await proxy?.refuse();
      await direct?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await direct?.end();
    });

    describe('a statement run on its own (autocommit)', () => {
      it('a write whose answer never came may have committed: it says so, and the row is there', async () => {
        const before = await deploys();
        proxy.muteAfter('INSERT INTO deploys');
        const error = await rejection(
          db.query('INSERT INTO deploys (ref) VALUES ($1) RETURNING id', ['v1']),
        );
        expect(error).toBeInstanceOf(McpError);
        expect((error as McpError).code).toBe(-32603);
        expect(error.message).toBe(UNKNOWN_LATE);
        // The driver's own error stays the cause (for logs), off the wire.
        expect((error.cause as { code?: string }).code).toBe('ETIMEDOUT');
        expect(Object.keys(error)).not.toContain('cause');
        // The statement committed: "changed nothing" and its "Retry the request" would make a second.
        expect(await deploysOnceSettled(before + 1)).toBe(before + 1);
      });

      it('a write whose connection was cut after it was sent: the same, worded as a lost connection', async () => {
        const before = await deploys();
        proxy.cutAfter('INSERT INTO deploys');
        const error = await rejection(db.query('INSERT INTO deploys (ref) VALUES ($1)', ['v2']));
        expect(error.message).toBe(UNKNOWN_LOST);
        expect(await deploysOnceSettled(before + 1)).toBe(before + 1);
      });

      it('a SELECT that locks rows (FOR UPDATE) counts as a write', async () => {
        proxy.muteAfter('FOR UPDATE');
        const error = await rejection(db.query('SELECT id FROM deploys FOR UPDATE'));
        expect(error.message).toBe(UNKNOWN_LATE);
      });

      it('a read whose answer never came changed nothing', async () => {
        proxy.muteAfter('SELECT count(*) FROM deploys');
        const error = await rejection(db.query('SELECT count(*) FROM deploys'));
        expect(error).toBeInstanceOf(McpError);
        expect((error as McpError).code).toBe(-32603);
        expect(error.message).toBe(NOTHING_LATE);
      });

      it('a write that got no connection within the deadline never reached the server: it changed nothing', async () => {
        const before = await deploys();
        proxy.holdNew(true);
        proxy.cutAll(); // the pool's idle connection goes: the statement needs a new one
        await new Promise((resolve) => setTimeout(resolve, 200));
        try {
          const error = await rejection(db.query('INSERT INTO deploys (ref) VALUES ($1)', ['v3']));
          expect(error.message).toBe(NOTHING_LATE);
          // Which deadline fires first is a race (the driver's, pg-pool's, node-postgres's connect
          // timeout: the same number of milliseconds); CI once saw the driver's wording of the last.
          expect((error.cause as Error).message).toMatch(
            /^(PostgreSQL did not answer with a connection within \d+ ms|PostgreSQL gave no connection in time: timeout exceeded when trying to connect|(no connection to PostgreSQL could be made: )?Connection terminated due to connection timeout)$/,
          );
        } finally {
          proxy.holdNew(false);
          proxy.cutAll();
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await deploys()).toBe(before);
      });

      it('a write whose connection was refused changed nothing', async () => {
        const before = await deploys();
        await proxy.refuse();
        await new Promise((resolve) => setTimeout(resolve, 200));
        try {
          const error = await rejection(db.query('INSERT INTO deploys (ref) VALUES ($1)', ['v4']));
          expect(error.message).toBe(NOTHING_UNREACHABLE);
          expect(error.cause).toMatchObject({ code: '08001', cause: { code: 'ECONNREFUSED' } });
        } finally {
          await proxy.start();
        }
        expect(await deploys()).toBe(before);
        // And the pool is back once PostgreSQL is.
        expect((await db.query('INSERT INTO deploys (ref) VALUES ($1)', ['v5'])).rows).toEqual([]);
      });
    });

    it('a transaction lost before COMMIT was sent still changed nothing (rolled back)', async () => {
      const before = await deploys();
      proxy.muteAfter('INSERT INTO deploys');
      const error = await rejection(
        db.transaction((tx) => tx.query('INSERT INTO deploys (ref) VALUES ($1)', ['v6'])),
      );
      expect(error.message).toBe(NOTHING_LATE);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await deploys()).toBe(before);
    });

    describe('atStartUp: a migration the database stalls or drops is run again', () => {
      const warned: string[] = [];
      const log = (line: string) => void warned.push(line);
      afterEach(() => {
        warned.length = 0;
      });

      it('the approval tables of exampleApprovals: a stalled migration, then a dropped one, are waited for', async () => {
        const lines: string[] = [];
        const original = console.warn;
        console.warn = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
        try {
          proxy.muteAfter('mrtr-approvals-migrate');
          const approvals = await exampleApprovals(
            db,
            'http://127.0.0.1:1',
            new Map([['tok-alice-0123456789', 'alice']]),
            'T',
          );
          expect(approvals.channel).toBeDefined();
          proxy.cutAfter('mrtr-approvals-migrate');
          await exampleApprovals(
            db,
            'http://127.0.0.1:1',
            new Map([['tok-alice-0123456789', 'alice']]),
            'T',
          );
        } finally {
          console.warn = original;
        }
        expect(proxy.fired.filter((t) => t === 'mrtr-approvals-migrate')).toHaveLength(2);
        const tries = lines.filter((l) => l.includes('(migrating the approval tables)'));
        // One line per fault; on a loaded host a healthy retry can miss the 400 ms deadline too,
        // and is told the same way.
        expect(tries.length).toBeGreaterThanOrEqual(2);
        expect(tries[0]).toMatch(
          /^PostgreSQL at 127\.0\.0\.1:\d+\/\w+ \(migrating the approval tables\) is not reachable yet \(the PostgreSQL connection was lost during the transaction; it was rolled back: PostgreSQL did not answer a statement within 400 ms\); trying again in 0\.5 s$/,
        );
        for (const line of tries) expect(line).toMatch(/ is not reachable yet \(the PostgreSQL /);
        expect(
          tries.some((l) => /is not reachable yet \(the PostgreSQL connection was lost/.test(l)),
        ).toBe(true);
        const { rows } = await direct.query(
          'SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = $2',
          [schema, 'mrtr_approvals'],
        );
        expect(rows).toHaveLength(1);
      });

      it('a COMMIT whose answer was lost (08007) is run again: the step is idempotent', async () => {
        let runs = 0;
        proxy.muteAfter('COMMIT');
        await atStartUp(
          db,
          'migrating t',
          async () => {
            runs++;
            await db.transaction(async (tx) => {
              await tx.query('CREATE TABLE IF NOT EXISTS migrated (id int PRIMARY KEY)');
              await tx.query('INSERT INTO migrated VALUES (1) ON CONFLICT DO NOTHING');
            });
          },
          { log },
        );
        // Twice: the COMMIT whose answer was lost, then a run that finished (more, on a loaded
        // host where a healthy run missed the 400 ms deadline; each told).
        expect(runs).toBeGreaterThanOrEqual(2);
        expect(warned).toHaveLength(runs - 1);
        expect(warned[0]).toContain(
          'lost at COMMIT; the transaction may or may not have committed',
        );
        expect((await direct.query(`SELECT id FROM ${schema}.migrated`)).rows).toEqual([{ id: 1 }]);
      });

      it('a failure that is no outage fails at once, untold', async () => {
        let runs = 0;
        const error = await rejection(
          atStartUp(
            db,
            'migrating t',
            async () => {
              runs++;
              await db.query('CREATE TABLE deploys (id int)');
            },
            { log },
          ),
        );
        expect((error as { code?: string }).code).toBe('42P07'); // duplicate_table
        expect(runs).toBe(1);
        expect(warned).toEqual([]);
      });
    });
  },
);

describe.skipIf(!postgres)(
  'the database of the example servers, when PostgreSQL refuses connections',
  () => {
    // A database of the test's own, closed the way an operator closes one (ALLOW_CONNECTIONS false,
    // then its sessions ended): each new session is answered FATAL 55000.
    const name = `mrtr_kit_closed_${randomBytes(4).toString('hex')}`;
    let admin: pg.Client;
    let db: Database;
    beforeAll(async () => {
      admin = new pg.Client({ connectionString: POSTGRES_URL });
      admin.on('error', () => {});
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${name}`;
      db = await openDatabase(url.href, { timeoutMs: 2000 });
      await db.query('CREATE TABLE deploys (id serial PRIMARY KEY, ref text NOT NULL)');
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1',
        [name],
      );
    });
    afterAll(async () => {
      await db?.close().catch(() => {});
      await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin?.end();
    });

    it.each([
      ['a write on its own', (d: Database) => d.query("INSERT INTO deploys (ref) VALUES ('v1')")],
      ['a read', (d: Database) => d.query('SELECT count(*) FROM deploys')],
      [
        'a transaction',
        (d: Database) => d.transaction((tx) => tx.query("INSERT INTO deploys (ref) VALUES ('v2')")),
      ],
    ])('%s: changed nothing, as an outage (-32603), not a failed statement', async (_, work) => {
      // The pool may still hold a client whose session the termination ended: the first try can
      // meet that one ("connection lost"), the next ones meet the closed database.
      let error = await rejection(work(db));
      for (let i = 0; i < 3 && !/refused/.test(error.message); i++)
        error = await rejection(work(db));
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32603);
      expect(error.message).toBe(NOTHING_REFUSED);
      expect((error.cause as { code?: string }).code).toBe('08004');
    });
  },
);
