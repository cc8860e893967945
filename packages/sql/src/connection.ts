/**
 * What a lost PostgreSQL connection looks like to the drivers: the errors
 * that mean "the connection is gone" (not "the statement was wrong"), and the
 * one error a transaction rejects with when it lost its connection.
 */

/**
 * SQLSTATE codes of PostgreSQL (Appendix A, "PostgreSQL Error Codes") that end
 * the session: `57P01` admin_shutdown (`pg_terminate_backend`), `57P02`
 * crash_shutdown, `57P03` cannot_connect_now, `57P04` database_dropped, `57P05`
 * idle_session_timeout, and class `08` connection_exception.
 */
const SESSION_ENDED = /^(08...|57P0[1-5])$/;

/** What node-postgres and Node's sockets say when there is no connection any more. */
const CLIENT_SIDE =
  /^(Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|timeout expired)$/;
const SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/** The brand every {@link ConnectionLostError} carries, shared by every copy of this package. */
const CONNECTION_LOST = Symbol.for('@mrtr/sql/ConnectionLostError');

/**
 * Thrown by the `transaction` of `pgPoolDriver` when the connection was lost
 * (backend terminated, socket closed) during the transaction, whatever the
 * statement or the function that saw it first threw (kept as `cause`).
 *
 * `code` is the SQLSTATE that says what became of the transaction:
 * - `08006` (connection_failure): lost before `COMMIT` was sent, or the server
 *   refused a statement before it (an `ERROR`, not a `FATAL`); nothing of the
 *   transaction was committed.
 * - `08007` (transaction_resolution_unknown): `COMMIT` was sent, no statement
 *   was refused by the server, and the connection was lost before its answer
 *   came back (a statement still unanswered then counts as unknown, not as
 *   refused); the transaction may or may not have committed.
 *
 * `instanceof ConnectionLostError` tests a brand, not the prototype chain, so
 * an error from another copy of this package (ESM next to CommonJS) is still
 * recognised.
 */
export class ConnectionLostError extends Error {
  override readonly name = 'ConnectionLostError';
  constructor(
    readonly code: '08006' | '08007',
    options: { cause: unknown },
  ) {
    super(
      code === '08006'
        ? `the PostgreSQL connection was lost during the transaction; it was rolled back: ${describe(options.cause)}`
        : `the PostgreSQL connection was lost at COMMIT; the transaction may or may not have committed: ${describe(options.cause)}`,
      options,
    );
    Object.defineProperty(this, CONNECTION_LOST, { value: true });
  }

  /** Brand check behind `instanceof`: any object carrying the brand, from any copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && CONNECTION_LOST in value;
  }
}

/** The brand every {@link NoConnectionError} carries, shared by every copy of this package. */
const NO_CONNECTION = Symbol.for('@mrtr/sql/NoConnectionError');

/**
 * Thrown by `pgPoolDriver` when the pool could not open a connection for a
 * statement or a transaction, for any reason other than its deadline: no
 * statement was sent, so nothing of it ran. The pool's own error is the
 * `cause`. `code` is the SQLSTATE of SQL's class `08` that says who refused:
 * - `08004` (sqlserver_rejected_establishment_of_sqlconnection): PostgreSQL
 *   answered the start of the session with an error of its own, e.g.
 *   `55000` "database … is not currently accepting connections", `53300`
 *   too many connections, `3D000` no such database, `28P01` a wrong password,
 *   `57P03` starting up or shutting down;
 * - `08001` (sqlclient_unable_to_establish_sqlconnection): anything else (a
 *   socket refused or reset, a name that does not resolve, TLS, a pool
 *   already ended).
 *
 * {@link isConnectionError} is true of it: a server that cannot be reached is
 * an outage, not a failed statement. `instanceof` tests a brand, as for
 * {@link ConnectionLostError}.
 */
export class NoConnectionError extends Error {
  override readonly name = 'NoConnectionError';
  constructor(
    readonly code: '08001' | '08004',
    options: { cause: unknown },
  ) {
    super(
      code === '08004'
        ? `PostgreSQL refused the connection: ${describe(options.cause)}`
        : `no connection to PostgreSQL could be made: ${describe(options.cause)}`,
      options,
    );
    Object.defineProperty(this, NO_CONNECTION, { value: true });
  }

  /** Brand check behind `instanceof`: any object carrying the brand, from any copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && NO_CONNECTION in value;
  }
}

/**
 * Severities of a PostgreSQL error that end the session (§55.8, "FATAL:
 * reports an error that caused the current session to abort"). node-postgres
 * gives the localized severity (field `S`): a server whose messages are not
 * in English is recognised by its SQLSTATE and, at connection time, by
 * {@link NoConnectionError}.
 */
const SESSION_ENDING_SEVERITY = new Set(['FATAL', 'PANIC']);

/**
 * Whether `error` says the connection to PostgreSQL is gone, or could not be
 * made, rather than that a statement failed: a {@link ConnectionLostError}
 * or {@link NoConnectionError}, a server error whose SQLSTATE ends the
 * session (`57P01` from `pg_terminate_backend`, `57P02` to `57P05`, class
 * `08`) or whose severity is `FATAL` or `PANIC`, node-postgres's
 * "Connection terminated…" / "… not queryable", or a socket error
 * (`ECONNRESET`, `ECONNREFUSED`, `EPIPE`, `ETIMEDOUT`, `EHOSTUNREACH`).
 * Follows `cause` chains.
 */
export function isConnectionError(error: unknown): boolean {
  for (const e of causeChain(error)) {
    if (e instanceof ConnectionLostError || e instanceof NoConnectionError) return true;
    const { code, severity } = e as { code?: unknown; severity?: unknown };
    if (typeof code === 'string' && (SESSION_ENDED.test(code) || SOCKET_CODES.has(code)))
      return true;
    if (typeof severity === 'string' && SESSION_ENDING_SEVERITY.has(severity)) return true;
    if (CLIENT_SIDE.test(e.message)) return true;
  }
  return false;
}

/**
 * Whether `error`, or an error it wraps, is a {@link ConnectionLostError}
 * `08007`: lost waiting for `COMMIT`'s answer, so the transaction may or may
 * not have committed. Follows `cause` chains, so a driver wrapped to word its
 * errors for people still says it.
 */
export function isOutcomeUnknown(error: unknown): boolean {
  for (const e of causeChain(error))
    if (e instanceof ConnectionLostError && e.code === '08007') return true;
  return false;
}

/**
 * `error` and the errors it wraps through `cause`, outermost first: at most
 * 8, and only `Error` objects (a cycle or a very deep chain ends there).
 */
export function* causeChain(error: unknown): Generator<Error> {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    yield e;
    e = (e as { cause?: unknown }).cause;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
