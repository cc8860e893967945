/**
 * The one small driver interface the store runs on, and its two adapters:
 * a `pg.Pool` (node-postgres) and PGlite (embedded PostgreSQL in WASM).
 */

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
}

/** What {@link pgliteDriver} uses of a `PGlite` instance. */
export interface PgliteLike {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  transaction<T>(fn: (tx: { query: PgliteLike['query'] }) => Promise<T>): Promise<T>;
}

const ignore = () => {};

/**
 * A {@link SqlDriver} on a node-postgres `pg.Pool`. A transaction checks out
 * one client, runs `BEGIN` … `COMMIT` (`ROLLBACK` when `fn` throws) at the
 * pool's default isolation (READ COMMITTED), and destroys the client instead
 * of returning it when the connection broke (e.g. `pg_terminate_backend`).
 *
 * On a pool created with `pipeline: true` (node-postgres query pipelining),
 * `BEGIN` travels with the first statement of `fn` and `COMMIT` with the
 * last one `fn` did not wait for, so `PostgresReplayStore.once` takes two
 * round trips plus the action's own instead of four. Give the pool an
 * `'error'` listener, as node-postgres asks, for idle clients.
 */
export function pgPoolDriver(pool: PgPoolLike): SqlDriver {
  return {
    query: (sql, params) => pool.query(sql, params) as never,
    async transaction(fn) {
      const client = await pool.connect();
      // A backend that dies mid-transaction makes the client emit 'error'; the
      // failing query already reports it, so this only keeps the process alive.
      client.on('error', ignore);
      let broken: Error | undefined;
      try {
        // Not awaited on its own: pipelined with the first statement, whose result waits for it.
        const begun = client.query('BEGIN');
        const tx: SqlQueryable = {
          query: (sql, params) =>
            Promise.all([begun, client.query(sql, params)]).then(([, result]) => result as never),
        };
        begun.catch(ignore);
        const result = await fn(tx);
        await begun;
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
