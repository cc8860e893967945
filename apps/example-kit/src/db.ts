import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import {
  causeChain,
  DEFAULT_PG_TIMEOUT_MS,
  isConnectionError,
  isOutcomeUnknown,
  pgliteDriver,
  pgPoolDriver,
  type SqlDriver,
} from '@mrtr/sql';
import { ErrorCode, McpError } from '@mrtr/wire';
import pg from 'pg';
import { untilReachable } from './reachable.js';

/** How much longer than the driver's deadline the server's `statement_timeout` is, in ms. */
const SERVER_TIMEOUT_MARGIN_MS = 1000;

/** The rows of a query. */
export interface QueryResult<R> {
  rows: R[];
}

/** What the example servers need of PostgreSQL: queries. */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
}

/**
 * A database handle: PGlite (embedded) or a `pg.Pool` behind one interface.
 * It is also an `SqlDriver` of `@mrtr/sql`, so the replay store
 * claims nonces inside the transactions that mutate the app's records.
 */
export interface Database extends Queryable {
  /** Run `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** Human-readable description of where the data lives (no credentials). */
  readonly description: string;
  /** PGlite (embedded): one connection, and no autovacuum (see `startSweeper`). */
  readonly embedded?: boolean;
  /** In-memory PGlite (`memory://`): every row costs memory until the process ends. */
  readonly inMemory?: boolean;
}

/**
 * The JSON-RPC error a lost database connection becomes, so a tool's request
 * gets an answer that says what happened instead of a bare "Internal error";
 * any other error unchanged. The example servers write only in transactions,
 * so before a `COMMIT` was sent this request changed nothing (an earlier one
 * may have: a retry returns its result).
 */
function databaseUnavailable(error: unknown): unknown {
  if (!isConnectionError(error)) return error;
  const unknown = isOutcomeUnknown(error);
  const why = timedOut(error)
    ? 'the database did not answer in time'
    : 'the connection to the database was lost';
  const mcp = new McpError(
    ErrorCode.InternalError,
    unknown
      ? `While committing, ${why}: the change may or may not have been made. Check before retrying.`
      : `This request changed nothing: ${why}. Retry the request.`,
  );
  Object.defineProperty(mcp, 'cause', { value: error, enumerable: false, configurable: true });
  return mcp;
}

/** `pgPoolDriver` gave up waiting (`timeoutMs`), or a socket timed out: `ETIMEDOUT` in the chain. */
const timedOut = (error: unknown) =>
  [...causeChain(error)].some((e) => (e as { code?: unknown }).code === 'ETIMEDOUT');

/** `driver` whose statements and transactions fail with {@link databaseUnavailable}. */
function answering(driver: SqlDriver): SqlDriver {
  const fail = (error: unknown): never => {
    throw databaseUnavailable(error);
  };
  return {
    query: <R>(sql: string, params?: unknown[]) => driver.query<R>(sql, params).catch(fail),
    transaction: (fn) => driver.transaction(fn).catch(fail),
  };
}

function fromPglite(db: PGlite, description: string, inMemory: boolean): Database {
  return {
    ...answering(pgliteDriver(db)),
    description,
    embedded: true,
    inMemory,
    close: () => db.close(),
  };
}

/**
 * Open the database named by `url`:
 * - `undefined` or `''`: embedded PGlite persisted under `options.dataDir` (required then);
 * - `memory://`: in-memory PGlite, gone when the process ends;
 * - `postgres://…` / `postgresql://…`: a PostgreSQL server through a `pg.Pool`.
 * @param options.searchPath a schema to use on a server (created if missing), for isolated tests.
 * @param options.timeoutMs how long a PostgreSQL server may take to answer one statement, in
 *   milliseconds, before the statement fails as a lost connection (`pgPoolDriver` of
 *   `@mrtr/sql`; default 10,000). The pool's sessions also get `statement_timeout` 1 s above
 *   it and `idle_in_transaction_session_timeout` of 6× it (at least 60 s), so a backend the
 *   driver gave up on ends on the server's side too. PGlite runs in process and has none.
 * A PostgreSQL server that cannot be reached yet is waited for (`untilReachable`: told on
 * stderr, tried again every 0.5 s to 5 s); the process does not exit for it.
 * @throws when the URL has another scheme, or PostgreSQL refuses the connection (a wrong password).
 */
export async function openDatabase(
  url: string | undefined,
  options: { dataDir?: string; searchPath?: string; timeoutMs?: number } = {},
): Promise<Database> {
  if (url === undefined || url === '') {
    const dir = options.dataDir;
    if (!dir) throw new Error('openDatabase: a dataDir is needed for embedded PGlite');
    mkdirSync(dir, { recursive: true });
    const db = new PGlite(dir);
    await db.waitReady;
    return fromPglite(db, `PGlite at ${dir}`, false);
  }
  if (url === 'memory://') {
    const db = new PGlite();
    await db.waitReady;
    return fromPglite(db, 'in-memory PGlite', true);
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    // Pipelining sends BEGIN with the replay claim and COMMIT with the recorded outcome.
    const config: pg.PoolConfig = { connectionString: url, max: 10, pipeline: true };
    // The server's own bounds, a little beyond the driver's: a backend whose client gave up
    // (the driver closes the socket) otherwise keeps its transaction and locks until its lock
    // wait ends, and one behind a network that stopped carrying packets keeps them for good.
    const ms = options.timeoutMs ?? DEFAULT_PG_TIMEOUT_MS;
    if (Number.isFinite(ms)) {
      // A connection the server accepts and never answers (a proxy without a backend) is given
      // up by the pool too, not only by the driver's deadline: it would keep its slot for good,
      // and ten of them leave the pool with none to connect with when the database comes back.
      config.connectionTimeoutMillis = Math.max(1, Math.ceil(ms));
      // PostgreSQL takes at most 2^31 − 1 ms (about 24.8 days) for either.
      const most = 2 ** 31 - 1;
      config.statement_timeout = Math.min(most, Math.ceil(ms) + SERVER_TIMEOUT_MARGIN_MS);
      config.idle_in_transaction_session_timeout = Math.min(
        most,
        Math.max(60_000, Math.ceil(ms) * 6),
      );
    }
    if (options.searchPath) {
      if (!/^[a-z_][a-z0-9_]*$/.test(options.searchPath)) throw new Error('invalid schema name');
      const setup = new pg.Client({ connectionString: url });
      // Its statements report a lost connection; without a listener the 'error' event would end the process.
      setup.on('error', () => {});
      try {
        await setup.connect();
        await setup.query(`CREATE SCHEMA IF NOT EXISTS ${options.searchPath}`);
      } finally {
        await setup.end().catch(() => {});
      }
      config.options = `-c search_path=${options.searchPath}`;
    }
    const pool = new pg.Pool(config);
    // Before the pool's first client: the driver gives every client an 'error' listener, so a
    // terminated backend fails the statement that needed it and never ends the process.
    const driver = pgPoolDriver(pool, {
      timeoutMs: options.timeoutMs,
      onConnectionError: (error) => console.warn(`PostgreSQL connection lost: ${error.message}`),
    });
    const where = new URL(url);
    // A database that is down at start is waited for; the driver's deadline covers one that never answers.
    await untilReachable(`PostgreSQL at ${where.host}${where.pathname}`, () =>
      driver.query('SELECT 1'),
    );
    return {
      ...answering(driver),
      description: `PostgreSQL at ${where.host}${where.pathname}`,
      embedded: false,
      inMemory: false,
      close: () => pool.end(),
    };
  }
  throw new Error(
    `DATABASE_URL must be unset, memory:// or postgres://…; got scheme ${url.split(':')[0]}`,
  );
}
