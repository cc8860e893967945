/**
 * The one small driver interface the PostgreSQL stores of mrtr-gate run on,
 * and its two adapters: a `pg.Pool` (node-postgres) and PGlite (embedded
 * PostgreSQL in WASM).
 */
import { ConnectionLostError, isConnectionError } from './connection.js';

/** The rows one statement returned, as objects keyed by column name. */
export interface SqlResult<R> {
  rows: R[];
}

/** Runs one parameterized statement (`$1`, `$2`, … placeholders). */
export interface SqlQueryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<SqlResult<R>>;
}

/**
 * Statements, and transactions: `fn` runs on one connection between `BEGIN`
 * and `COMMIT`, rolled back when it throws. Statements issued on `tx` run in
 * the order issued, and those issued before `fn` settles run before `COMMIT`
 * even when `fn` did not wait for them; a transaction that a failed
 * statement aborted must make `transaction` reject, never report a commit.
 * A transaction that lost its connection rejects with
 * {@link ConnectionLostError}, whatever `fn` threw.
 */
export interface SqlDriver extends SqlQueryable {
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
}

/** What {@link pgPoolDriver} uses of a checked-out `pg.PoolClient`. */
export interface PgPoolClientLike {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[]; command?: string }>;
  release(destroy?: boolean | Error): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
}

/** What {@link pgPoolDriver} uses of a `pg.Pool`. */
export interface PgPoolLike {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<PgPoolClientLike>;
  /** `pg.Pool#on`: when present, the driver listens to `'connect'` and `'error'` (see {@link pgPoolDriver}). */
  on?(event: 'connect', listener: (client: PgPoolClientLike) => void): unknown;
  on?(event: 'error', listener: (error: Error) => void): unknown;
}

/** Options of {@link pgPoolDriver}. */
export interface PgPoolDriverOptions {
  /**
   * Told of each error a pool client reports outside a statement: a
   * connection lost while idle in the pool, or between two statements of a
   * checked-out client (the statement that next needs it fails on its own).
   * Default: nothing is done with it. Never throw from it.
   */
  onConnectionError?: (error: Error) => void;
}

/** What {@link pgliteDriver} uses of a `PGlite` instance. */
export interface PgliteLike {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  transaction<T>(fn: (tx: { query: PgliteLike['query'] }) => Promise<T>): Promise<T>;
}

const ignore = () => {};
/** Pools whose clients already get an `'error'` listener from a driver. */
const guarded = new WeakSet<object>();

/**
 * node-postgres emits `'error'` on a client whose connection dies while no
 * statement is waiting on it, and an `'error'` event nobody listens to ends
 * the process. A pool's own listener covers idle clients only: it is removed
 * while a client is checked out, and a new client can even receive its
 * backend's termination in the same read as its ready message, before the
 * caller of `pool.connect()` got it. So every client gets a listener of its
 * own as soon as the pool creates it (`'connect'`), and the pool one for the
 * idle clients it drops (`'error'`).
 */
function guard(pool: PgPoolLike, report: (error: Error) => void): void {
  if (typeof pool.on !== 'function' || guarded.has(pool)) return;
  guarded.add(pool);
  pool.on('connect', (client: PgPoolClientLike) => client.on('error', report));
  pool.on('error', report);
}

/**
 * A {@link SqlDriver} on a node-postgres `pg.Pool`. A transaction checks out
 * one client, runs `BEGIN` … `COMMIT` (`ROLLBACK` when `fn` throws) at the
 * pool's default isolation (READ COMMITTED), and destroys the client instead
 * of returning it when the connection broke (e.g. `pg_terminate_backend`).
 *
 * On a pool created with `pipeline: true` (node-postgres query pipelining,
 * pg ≥ 8.23), `BEGIN` travels with the first statement of `fn` and `COMMIT`
 * with the last one `fn` did not wait for, so `PostgresReplayStore.once`
 * takes two round trips plus the action's own instead of four.
 *
 * A lost connection never ends the process: the driver adds an `'error'`
 * listener to the pool and to every client the pool creates from then on
 * (create the driver before the pool's first use; a second driver on the
 * same pool adds none), reporting to `options.onConnectionError`. A
 * transaction that lost its connection rejects with
 * {@link ConnectionLostError} (`08006`: rolled back; `08007`: lost at
 * `COMMIT`, outcome unknown) and its client is destroyed; a statement run
 * outside a transaction rejects with node-postgres's own error (see
 * {@link isConnectionError}). The pool replaces lost clients on its own.
 */
export function pgPoolDriver(pool: PgPoolLike, options: PgPoolDriverOptions = {}): SqlDriver {
  const report = options.onConnectionError ?? ignore;
  guard(pool, (error) => {
    try {
      report(error);
    } catch {
      // a reporter that throws must not turn a lost connection into a crash
    }
  });
  return {
    query: (sql, params) => pool.query(sql, params) as never,
    async transaction(fn) {
      const client = await pool.connect();
      // A backend that dies mid-transaction makes the client emit 'error'; the
      // failing query already reports it, so this only keeps the process alive.
      client.on('error', ignore);
      let broken: Error | undefined;
      let committing = false;
      const issued: Promise<unknown>[] = []; // every statement before COMMIT
      const send = (sql: string, params?: unknown[]) => {
        const sent = client.query(sql, params);
        sent.catch(ignore);
        issued.push(sent);
        return sent;
      };
      try {
        // Not awaited on its own: pipelined with the first statement, whose result waits for it.
        const begun = send('BEGIN');
        const tx: SqlQueryable = {
          query: (sql, params) =>
            Promise.all([begun, send(sql, params)]).then(([, result]) => result as never),
        };
        const result = await fn(tx);
        await begun;
        committing = true;
        const committed = await client.query('COMMIT');
        // COMMIT of a transaction a failed statement aborted answers ROLLBACK, not an error.
        if (committed.command === 'ROLLBACK')
          throw new Error('the transaction was rolled back at COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          broken =
            rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        }
        // No ROLLBACK possible: the connection is gone, and with it the transaction.
        if (broken && (isConnectionError(broken) || isConnectionError(error))) {
          // A statement that failed before COMMIT aborted the transaction: it cannot have committed.
          const settled = await Promise.allSettled(issued);
          const unknown = committing && settled.every((s) => s.status === 'fulfilled');
          throw new ConnectionLostError(unknown ? '08007' : '08006', { cause: error });
        }
        throw error;
      } finally {
        client.off('error', ignore);
        client.release(broken);
      }
    },
  };
}

/**
 * A {@link SqlDriver} on PGlite. PGlite is one connection: its transactions
 * run one at a time, and a statement on the `PGlite` instance itself waits
 * until the open transaction ends, so inside `fn` use only the `tx` given.
 * PGlite queues statements in order and fails a `COMMIT` that answers
 * `ROLLBACK`, as {@link SqlDriver} requires.
 */
export function pgliteDriver(db: PgliteLike): SqlDriver {
  return {
    query: (sql, params) => db.query(sql, params) as never,
    transaction: (fn) =>
      db.transaction((tx) => fn({ query: (sql, params) => tx.query(sql, params) as never })),
  };
}
