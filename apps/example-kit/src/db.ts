import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import {
  causeChain,
  DEFAULT_PG_TIMEOUT_MS,
  isConnectionError,
  isOutcomeUnknown,
  NoConnectionError,
  pgliteDriver,
  pgPoolDriver,
  pgPoolTimeouts,
  type SqlDriver,
} from '@mrtr/sql';
import { ErrorCode, McpError } from '@mrtr/wire';
import pg from 'pg';
import { type UntilReachableOptions, untilReachable } from './reachable.js';

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

/** How the statement that failed was run: in a transaction, or on its own (autocommit) with its SQL. */
type Ran = { transaction: true } | { transaction: false; sql: string };

/**
 * The JSON-RPC error (`-32603`, the driver's error as non-enumerable `cause`) a lost database
 * connection or a deadline becomes, so a tool's request gets an answer that says what happened
 * instead of a bare "Internal error"; any other error unchanged. What it says of the change
 * depends on what is known of it:
 * - a transaction that was rolled back (lost before `COMMIT` was sent, `08006`, or no connection
 *   at all): "This request changed nothing" (an earlier one may have: a retry returns its result);
 * - a transaction lost waiting for `COMMIT`'s answer (`08007`): the change may or may not have
 *   been made;
 * - a statement run on its own, outside a transaction (autocommit: `recordDeploy` of the service
 *   deleter, any `db.query`): "changed nothing" only when it never reached the server
 *   ({@link neverSent}) or is a read ({@link isRead}); otherwise the server may have run and
 *   committed it and only its answer was lost, so the change may or may not have been made, and
 *   a blind retry could make it twice.
 */
function databaseUnavailable(error: unknown, ran: Ran): unknown {
  if (!isConnectionError(error)) return error;
  const why = timedOut(error)
    ? 'the database did not answer in time'
    : error instanceof NoConnectionError
      ? error.code === '08004'
        ? 'the database refused the connection'
        : 'the database could not be reached'
      : 'the connection to the database was lost';
  const message = isOutcomeUnknown(error)
    ? `While committing, ${why}: the change may or may not have been made. Check before retrying.`
    : ran.transaction || neverSent(error) || isRead(ran.sql)
      ? `This request changed nothing: ${why}. Retry the request.`
      : `${why.replace(/^t/, 'T')}: the change may or may not have been made. Check before retrying.`;
  const mcp = new McpError(ErrorCode.InternalError, message);
  Object.defineProperty(mcp, 'cause', { value: error, enumerable: false, configurable: true });
  worded.add(mcp);
  return mcp;
}

/** The errors {@link databaseUnavailable} made, so {@link atStartUp} can tell the driver's own. */
const worded = new WeakSet<object>();

/**
 * `pgPoolDriver` gave up waiting (`timeoutMs`), or a socket timed out (`ETIMEDOUT` in the
 * chain), or pg-pool's or node-postgres's own connect timeout fired first (the same number of
 * milliseconds: which of them wins is a race, and the answer must not depend on it).
 */
const timedOut = (error: unknown) =>
  [...causeChain(error)].some(
    (e) =>
      (e as { code?: unknown }).code === 'ETIMEDOUT' ||
      /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout|timeout expired)$/.test(
        e.message,
      ),
  );

/**
 * What the driver and node-postgres say when no connection was handed out, so no statement was
 * sent: `pgPoolDriver`'s checkout deadline and its wording of pg-pool's own wait (`checkout` in
 * `@mrtr/sql`), pg-pool's wait itself (`connectionTimeoutMillis`: every client busy, or a new
 * connection that did not finish its start-up), node-postgres's connect timeout, and a client it
 * refused to send on ("… is not queryable").
 */
const NO_CONNECTION = [
  /^PostgreSQL did not answer with a connection within \d+ ms$/,
  /^PostgreSQL gave no connection in time: /,
  /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout|timeout expired)$/,
  / is not queryable$/,
];

/** Socket errors only a connection being made meets: refused, or a host name that does not resolve. */
const AT_CONNECT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether the failure of a statement run on its own says it never reached the server: the pool
 * gave no connection in time ({@link NO_CONNECTION}), or the connection could not be made (a
 * refused connection, a host not found: `AT_CONNECT` codes, or a Node system error of the
 * `connect` or `getaddrinfo` call). Only the error the driver rejected with is read, not its
 * causes: a lost connection or a statement deadline says nothing of what the server ran.
 */
function neverSent(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof NoConnectionError) return true;
  if (NO_CONNECTION.some((said) => said.test(error.message))) return true;
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  return (
    (typeof code === 'string' && AT_CONNECT.has(code)) ||
    syscall === 'connect' ||
    syscall === 'getaddrinfo'
  );
}

/**
 * Whether `sql` only reads, read simply and cautiously: it begins with `SELECT`, and takes no row
 * lock (`FOR UPDATE`, `FOR NO KEY UPDATE`, `FOR SHARE`, `FOR KEY SHARE`) and makes no table
 * (`SELECT … INTO`), and is one statement. A `WITH`, a comment first, anything else counts as a
 * write. A `SELECT` that
 * calls a function that writes would pass: the example servers' own `SELECT`s call none.
 */
function isRead(sql: string): boolean {
  return (
    /^\s*SELECT\b/i.test(sql) &&
    // One statement: a simple query may hold several (`SELECT 1; DELETE …`).
    !/;\s*\S/.test(sql) &&
    !/\bFOR\s+(UPDATE|NO\s+KEY\s+UPDATE|SHARE|KEY\s+SHARE)\b/i.test(sql) &&
    !/\bINTO\b/i.test(sql)
  );
}

/** `driver` whose statements and transactions fail with {@link databaseUnavailable}. */
function answering(driver: SqlDriver): SqlDriver {
  return {
    query: <R>(sql: string, params?: unknown[]) =>
      driver.query<R>(sql, params).catch((error: unknown): never => {
        throw databaseUnavailable(error, { transaction: false, sql });
      }),
    transaction: (fn) =>
      driver.transaction(fn).catch((error: unknown): never => {
        throw databaseUnavailable(error, { transaction: true });
      }),
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
 * stderr, tried again every 0.5 s to 5 s); the process does not exit for it. Run the
 * migrations that follow with {@link atStartUp}, which waits the same way.
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
    Object.assign(config, pgPoolTimeouts(options.timeoutMs ?? DEFAULT_PG_TIMEOUT_MS));
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

/** How long {@link atStartUp} waits in all for a step that keeps failing, in ms: 5 minutes. */
export const START_UP_PATIENCE_MS = 300_000;

/**
 * Run `step`, a start-up migration of `db` (`migrateReplayTable(db)`, an app's own `migrate`,
 * `migrateApprovalTables`, …) or another start-up step safe to run again, waiting for
 * PostgreSQL the way {@link openDatabase} waits for its first answer: a server that answered
 * that and then stalls or drops the connection during the step is no reason to exit. Each
 * failure that `isUnreachable` (exported beside it) calls an outage (a lost connection, the
 * driver's deadline, `08006` or `08007` of a transaction, and a database that gave up: a
 * deadlock, a lock or statement timeout) is told on stderr
 * (`<db.description> (<what>) is not reachable yet (<the driver's message>); trying again in
 * <s> s`) and `step` is run again after 0.5 s, doubling up to 5 s, until it succeeds or
 * {@link START_UP_PATIENCE_MS} (5 minutes) have been waited in all: unlike the first answer,
 * which a database still starting owes, a step that keeps failing after it may be one that
 * always outlives the driver's deadline (an index built on a large table, a lock held
 * elsewhere), and a process that exits says so where a retry for good would only repeat it.
 *
 * Running `step` again must be safe even when its `COMMIT` was lost after the server committed
 * (`08007`): the migrations of the example servers and of `@mrtr/*` are (an advisory lock,
 * `CREATE … IF NOT EXISTS`, `ADD COLUMN IF NOT EXISTS`, `INSERT … ON CONFLICT DO NOTHING`, the
 * seed only when its version row was new), and so is the file deleter's recovery of its trash.
 * @param db the database `step` runs on; its `description` (`PostgreSQL at host:port/name`)
 *   begins the log line.
 * @param what the step, for the log line (e.g. `migrating mrtr_replay`).
 * @param options.log where each failed attempt is told (default `console.warn`); `sleep` as
 *   for `untilReachable`; `giveUpAfterMs`, milliseconds (default {@link START_UP_PATIENCE_MS}).
 * @returns what `step` resolved to.
 * @throws at once the first failure that is no outage (a statement the server refused as
 *   written, a missing permission), as the driver or `step` threw it; after `giveUpAfterMs`,
 *   the driver's error of the last outage (not the request-facing `-32603` the database words
 *   it as).
 */
export function atStartUp<T>(
  db: Pick<Database, 'description'>,
  what: string,
  step: () => Promise<T>,
  options: UntilReachableOptions = {},
): Promise<T> {
  return untilReachable(
    `${db.description} (${what})`,
    // The driver's own error: it names what happened (and is what `isUnreachable` reads).
    () =>
      step().catch((error: unknown): never => {
        throw worded.has(error as object) ? (error as { cause?: unknown }).cause : error;
      }),
    { giveUpAfterMs: START_UP_PATIENCE_MS, ...options },
  );
}
