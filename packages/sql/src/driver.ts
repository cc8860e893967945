/**
 * The one small driver interface the PostgreSQL stores of mrtr-gate run on,
 * and its two adapters: a `pg.Pool` (node-postgres) and PGlite (embedded
 * PostgreSQL in WASM).
 */
import { ConnectionLostError, isConnectionError, NoConnectionError } from './connection.js';

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
 * A statement issued on `tx` after `fn` settled rejects and runs nowhere
 * (never in another transaction that reuses the connection). A failed
 * statement that `fn` did not wait for rejects no one (no unhandled
 * rejection): the transaction reports it. A transaction that lost its
 * connection rejects with {@link ConnectionLostError}, whatever `fn` threw.
 */
export interface SqlDriver extends SqlQueryable {
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
}

/** What {@link pgPoolDriver} uses of a checked-out `pg.PoolClient`. */
export interface PgPoolClientLike {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[]; command?: string }>;
  release(destroy?: boolean | Error): void;
  /**
   * node-postgres's wire connection. When present, a client given up on has
   * its socket destroyed: `release(error)` alone ends a pipelining client
   * only once the statements it sent are answered, which a stalled backend
   * never does.
   */
  connection?: { stream?: { destroy?: () => void } };
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
  /**
   * How long PostgreSQL may take to answer one statement, and the pool to
   * hand out a client, in milliseconds; default {@link DEFAULT_PG_TIMEOUT_MS}
   * (10,000). `Infinity` waits forever. A backend that is stopped, waits on a
   * lock, or sits behind a network that drops packets never answers: without
   * a deadline each request waits on it for good, and the pool's clients run
   * out for every other request. On expiry the client's socket is closed
   * (PostgreSQL rolls back what was not committed once it sees the closed
   * connection: at once when it waits for the next statement, at the end of
   * a lock wait or other work in progress; a close that never reaches it, as
   * behind a network partition, only when its own bounds fire: give the
   * pool {@link pgPoolTimeouts} of the same value) and the statement rejects with a connection error (see
   * {@link isConnectionError}, `code` `ETIMEDOUT`); a transaction rejects
   * with {@link ConnectionLostError}, `08006` when `COMMIT` had not been sent
   * and `08007` when it had (a stopped backend may still read it later).
   */
  timeoutMs?: number;
}

/** Default of {@link PgPoolDriverOptions.timeoutMs}: 10,000 ms. */
export const DEFAULT_PG_TIMEOUT_MS = 10_000;

/** The `pg.Pool` options {@link pgPoolTimeouts} returns, all in milliseconds. */
export interface PgPoolTimeouts {
  /** How long the pool waits to connect: a server that accepts and never answers keeps no slot for good. */
  connectionTimeoutMillis?: number;
  /** PostgreSQL's own bound on a statement, a second beyond the driver's (a lock wait included). */
  statement_timeout?: number;
  /** PostgreSQL's bound on a transaction left idle: `timeoutMs` × 6, at least 60,000. */
  idle_in_transaction_session_timeout?: number;
}

/**
 * The `pg.Pool` options that make PostgreSQL itself give up what a
 * {@link pgPoolDriver} of the same `timeoutMs` gives up on; spread them into
 * the pool's config (`new pg.Pool({ connectionString, ...pgPoolTimeouts() })`).
 *
 * The driver closes its socket when a statement outlives `timeoutMs`, but a
 * close the server never receives (a network partition, a NAT entry or a
 * load balancer gone) leaves the backend idle in its transaction, holding
 * the replay claim and the rows it locked until the server's TCP keepalive
 * gives up (two hours by default on Linux): every re-send of that
 * confirmation, and every request for those rows, then waits and fails.
 * `idle_in_transaction_session_timeout` rolls such a transaction back on the
 * server; `statement_timeout` ends the lock waits of the retries, which
 * PostgreSQL would otherwise keep on connections their clients closed.
 * Both are session settings sent when each connection starts: nothing is
 * added to a transaction. Behind PgBouncer or another pooler, which refuses
 * them as startup parameters (or drops them when told to ignore them), keep
 * only `connectionTimeoutMillis` and set the other two on the role or the
 * database (`ALTER ROLE … SET idle_in_transaction_session_timeout = '60s'`).
 * @param timeoutMs the driver's `timeoutMs` (default {@link DEFAULT_PG_TIMEOUT_MS}); `Infinity` gives `{}`.
 * @returns `connectionTimeoutMillis` = `timeoutMs`, `statement_timeout` = `timeoutMs` + 1,000,
 *   `idle_in_transaction_session_timeout` = max(60,000, 6 × `timeoutMs`), each at most 2^31 − 1 (PostgreSQL's bound).
 * @throws {RangeError} when `timeoutMs` is not a positive number.
 */
export function pgPoolTimeouts(timeoutMs: number = DEFAULT_PG_TIMEOUT_MS): PgPoolTimeouts {
  if (!(timeoutMs > 0))
    throw new RangeError(`timeoutMs must be a positive number of milliseconds; got ${timeoutMs}`);
  if (timeoutMs === Number.POSITIVE_INFINITY) return {};
  const ms = Math.ceil(timeoutMs);
  const most = 2 ** 31 - 1;
  return {
    connectionTimeoutMillis: Math.min(most, ms),
    statement_timeout: Math.min(most, ms + 1000),
    idle_in_transaction_session_timeout: Math.min(most, Math.max(60_000, ms * 6)),
  };
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
 * Take `client` out of the pool for good and close its socket at once, so
 * that its statements still waiting reject and its backend sees the closed
 * connection (and rolls back) instead of keeping its transaction and locks.
 */
function discard(client: PgPoolClientLike, error: Error): void {
  client.release(error);
  try {
    client.connection?.stream?.destroy?.();
  } catch {
    // already closed
  }
}

/**
 * The brand `serviceUnavailable` of `@mrtr/wire` reads on an error that says
 * a service could not be reached (a registry symbol: no dependency on wire).
 */
const SERVICE_UNAVAILABLE = Symbol.for('@mrtr/wire/serviceUnavailable');

/** The error a statement or checkout that outlived its deadline rejects with. */
function timedOut(ms: number, what: string): Error {
  const error = Object.assign(new Error(`PostgreSQL did not answer ${what} within ${ms} ms`), {
    code: 'ETIMEDOUT',
  });
  Object.defineProperty(error, SERVICE_UNAVAILABLE, { value: true });
  return error;
}

/**
 * `work`, or a rejection with {@link timedOut} after `ms`, calling `expire`
 * first (once, with that error). The timer does not keep the process alive.
 */
function within<T>(work: Promise<T>, ms: number, what: string, expire: (e: Error) => void) {
  if (ms === Number.POSITIVE_INFINITY) return work;
  return new Promise<T>((resolve, reject) => {
    // setTimeout takes at most 2^31 − 1 ms (about 24.8 days); more would fire at once.
    const timer = setTimeout(
      () => {
        const error = timedOut(ms, what);
        expire(error);
        reject(error);
      },
      Math.min(ms, 2 ** 31 - 1),
    );
    timer.unref();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** A SQLSTATE: five digits or upper-case letters (PostgreSQL, Appendix A). */
const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * Whether a statement's rejection is the server's own answer to it: an
 * `ErrorResponse` of severity `ERROR` with a SQLSTATE outside class `08`.
 * The server read the statement and failed it, and the session went on with
 * the transaction aborted: nothing of it can commit. Anything else tells
 * nothing of what became of the statements sent: a `FATAL` (a terminated
 * backend, `57P01`, or a connection pooler's own `08P01` when it lost its
 * server), a socket error (`EPIPE` has five characters too), an error without
 * a severity. A server whose messages are not in English words its severity
 * otherwise: its refusals count as telling nothing, the cautious reading.
 */
function refusedByServer(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return (
    severity === 'ERROR' &&
    typeof code === 'string' &&
    SQLSTATE.test(code) &&
    !code.startsWith('08')
  );
}

/** Whether node-postgres refused to send the statement at all: its client was already unusable. */
function neverSent(error: unknown): boolean {
  return error instanceof Error && / is not queryable$/.test(error.message);
}

/** What pg-pool rejects with when no client came free within its `connectionTimeoutMillis`. */
const POOL_TIMEOUT = /^timeout exceeded when trying to connect$/;

/** Whether `error` is PostgreSQL's own answer (it carries a SQLSTATE, five characters), not the client's or the socket's. */
function serverSaid(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && SQLSTATE.test(code) && typeof severity === 'string';
}

/**
 * A client from `pool` within `ms`; one the pool hands out after that goes
 * straight back. The pool's own wait (`connectionTimeoutMillis`, every client
 * busy or a connection that does not answer) rejects as this deadline does;
 * any other failure to connect rejects with {@link NoConnectionError}.
 */
function checkout(pool: PgPoolLike, ms: number): Promise<PgPoolClientLike> {
  let late = false;
  const connecting = pool.connect().catch((error: unknown) => {
    if (error instanceof Error && POOL_TIMEOUT.test(error.message)) {
      const busy = timedOut(ms, 'with a connection');
      busy.message = `PostgreSQL gave no connection in time: ${error.message}`;
      busy.cause = error;
      throw busy;
    }
    // No session, so no statement was sent: whatever the reason, an outage, not a failed statement.
    throw new NoConnectionError(serverSaid(error) ? '08004' : '08001', { cause: error });
  });
  connecting.then((client) => {
    if (late) client.release();
  }, ignore);
  return within(connecting, ms, 'with a connection', () => {
    late = true;
  });
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
  const ms = options.timeoutMs ?? DEFAULT_PG_TIMEOUT_MS;
  if (!(ms > 0))
    throw new RangeError(`timeoutMs must be a positive number of milliseconds; got ${ms}`);
  guard(pool, (error) => {
    try {
      report(error);
    } catch {
      // a reporter that throws must not turn a lost connection into a crash
    }
  });
  return {
    query: async (sql, params) => {
      if (ms === Number.POSITIVE_INFINITY) return pool.query(sql, params) as never;
      const client = await checkout(pool, ms);
      let gone: Error | undefined;
      const destroy = (error: Error) => {
        gone = error;
        discard(client, error);
      };
      try {
        return (await within(client.query(sql, params), ms, 'a statement', destroy)) as never;
      } catch (error) {
        if (!gone && isConnectionError(error)) destroy(error as Error);
        throw error;
      } finally {
        if (!gone) client.release();
      }
    },
    async transaction(fn) {
      const client = await checkout(pool, ms);
      // A backend that dies mid-transaction makes the client emit 'error'; the
      // failing query already reports it, so this only keeps the process alive.
      client.on('error', ignore);
      let broken: Error | undefined;
      let committing = false;
      /** What COMMIT itself rejected with, if it did. */
      let commitFailure: { error: unknown } | undefined;
      // Set when a statement outlived its deadline: the client is destroyed then and there,
      // which fails every statement still waiting on it.
      let gone: Error | undefined;
      const destroy = (error: Error) => {
        if (gone) return;
        gone = error;
        discard(client, error);
      };
      const timed = (sql: string, params?: unknown[]) =>
        within(client.query(sql, params), ms, 'a statement', destroy);
      const issued: Promise<unknown>[] = []; // every statement before COMMIT
      const send = (sql: string, params?: unknown[]) => {
        const sent = timed(sql, params);
        sent.catch(ignore);
        issued.push(sent);
        return sent;
      };
      try {
        // Not awaited on its own: pipelined with the first statement, whose result waits for it.
        const begun = send('BEGIN');
        let ended = false;
        const tx: SqlQueryable = {
          query: (sql, params) =>
            ended
              ? Promise.reject(new TransactionEndedError())
              : handled(
                  Promise.all([begun, send(sql, params)]).then(([, result]) => result as never),
                ),
        };
        let result: Awaited<ReturnType<typeof fn>>;
        try {
          result = await fn(tx);
        } finally {
          // The client goes back to the pool after this: a late statement would join the next
          // transaction on it.
          ended = true;
        }
        await begun;
        committing = true;
        const committed = (await timed('COMMIT').catch((error: unknown) => {
          commitFailure = { error };
          throw error;
        })) as { command?: string };
        // COMMIT of a transaction a failed statement aborted answers ROLLBACK, not an error.
        if (committed.command === 'ROLLBACK')
          throw new Error('the transaction was rolled back at COMMIT');
        return result;
      } catch (error) {
        if (commitFailure && !gone && !refusedByServer(error) && !isConnectionError(error)) {
          // COMMIT was sent and got no answer of the server's (pg's own query_timeout, say): it
          // may have committed. Nothing more is sent on this client; it is discarded below.
          broken = error instanceof Error ? error : new Error(String(error));
          throw new ConnectionLostError('08007', { cause: error });
        }
        try {
          if (gone) throw gone;
          await timed('ROLLBACK');
        } catch (rollbackError) {
          broken =
            rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        }
        // No ROLLBACK possible: the connection is gone, and with it the transaction.
        if (broken && (isConnectionError(broken) || isConnectionError(error))) {
          // Known rolled back: COMMIT never left (the client was unusable when it was queued),
          // or the server refused a statement before it, which aborted the transaction. A
          // statement that failed only because the connection went (closed by the deadline or
          // by the network) tells nothing: it and the COMMIT behind it may be in the backend's
          // socket still, or have run already, and the answers lost on the way back.
          const settled = await Promise.allSettled(issued);
          const refused = settled.some((s) => s.status === 'rejected' && refusedByServer(s.reason));
          const unknown = committing && !refused && !neverSent(error);
          throw new ConnectionLostError(unknown ? '08007' : '08006', { cause: error });
        }
        throw error;
      } finally {
        // A destroyed client keeps its listener: its closing socket may still report.
        if (gone) {
          // destroyed when the deadline passed
        } else if (broken) {
          discard(client, broken);
        } else {
          client.off('error', ignore);
          client.release();
        }
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
      db.transaction(async (tx) => {
        let ended = false;
        try {
          return await fn({
            query: (sql, params) =>
              ended
                ? Promise.reject(new TransactionEndedError())
                : (handled(tx.query(sql, params)) as never),
          });
        } finally {
          ended = true;
        }
      }),
  };
}

/**
 * Thrown by a statement issued on a transaction's `tx` after its `fn`
 * settled (a statement `fn` forgot to await, run later): it runs nowhere.
 */
export class TransactionEndedError extends Error {
  override readonly name = 'TransactionEndedError';
  constructor() {
    super(
      'this transaction has ended: a statement issued on its tx after fn settled runs nowhere (await every statement in fn)',
    );
  }
}

/**
 * `promise`, marked as handled: a statement `fn` issues and does not wait
 * for fails the transaction (COMMIT answers ROLLBACK), so its own rejection
 * need not also end the process as an unhandled one. Whoever awaits it
 * still gets the rejection.
 */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}
