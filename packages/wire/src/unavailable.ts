/**
 * A handler that fails because a database or service it needs cannot be
 * reached (refused, reset or timed-out sockets, a PostgreSQL session ended
 * by the server) has not met a bug of the server: the request may be retried
 * once the service is back. `@mrtr/server` answers such a throw with
 * `-32603`, HTTP 503 and a message that says so, and `@mrtr/sdk` with the
 * same `-32603`, instead of a bare "Internal error".
 */
import { ErrorCode, McpError } from './errors.js';

/** How many `cause` links are followed: a wrapper of a wrapper of the driver's error. */
const MAX_CAUSES = 4;

/**
 * The SQLSTATE of a database error, as drivers report it: `code` beside a
 * `severity` (node-postgres, PGlite, postgres.js), or `sqlState` (mysql2,
 * mariadb). `undefined` for any other value.
 */
export function sqlStateOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { code?: unknown; severity?: unknown; sqlState?: unknown };
  if (typeof e.sqlState === 'string') return e.sqlState;
  if (typeof e.code === 'string' && typeof e.severity === 'string') return e.code;
  return undefined;
}

/** Node's socket and DNS error codes (`error.code` of a system error) that mean the peer cannot be reached. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATE codes (PostgreSQL manual, appendix A) of a database that ended the
 * session or cannot serve it: class `08` (connection_exception), `57P01` to
 * `57P05` (admin or crash shutdown, cannot connect now, database dropped,
 * idle session timeout), `53300` (too_many_connections), `25006`
 * (read_only_sql_transaction: a standby, or a primary set read-only, that
 * cannot take this write now).
 */
const SESSION_LOST = /^(08[0-9A-Z]{3}|57P0[1-5]|53300|25006)$/;

/**
 * Source files of PostgreSQL that raise the refusals of a session being
 * started: authentication (`auth.c`, `auth-scram.c`, `hba.c`) and the
 * session's set-up (`postinit.c`, `miscinit.c`). Neither `file` nor `routine`
 * is translated, where the severity is.
 */
const SESSION_START_FILE = /^(auth|auth-scram|hba|postinit|miscinit)\.c$/;

/**
 * Whether `error` is PostgreSQL refusing a new session for its own
 * configuration, which no wait changes: SQLSTATE class `28`
 * (invalid_authorization_specification: an unknown role, a wrong password,
 * no `pg_hba.conf` entry) or `3D000` (invalid_catalog_name: the database is
 * not there), raised as the refusal of the session: at severity `FATAL`, or
 * from a file or routine of the session's start (`auth.c`, `hba.c`, …,
 * routine `InitPostgres`), which a server set to another language does not
 * translate where it words the severity in it (`ВАЖНО`, `FATALE`). The same
 * codes raised on a working session are that statement's own error: `3D000`
 * of `DROP DATABASE` of a name that does not exist, class `28` of a
 * function's `RAISE … USING ERRCODE` or an extension's password check.
 * node-postgres's "The server does not support SSL connections" counts too.
 * Only the error itself is read, not its `cause`.
 */
export function sessionRefusedByConfiguration(error: unknown): boolean {
  try {
    if (!(error instanceof Error)) return false;
    if (error.message === 'The server does not support SSL connections') return true;
    const state = sqlStateOf(error) ?? ownCode(error, /^\d[0-9A-Z]{4}$/);
    if (state === undefined || !(state.startsWith('28') || state === '3D000')) return false;
    return endsSession(error);
  } catch {
    return false; // an error that throws as it is read
  }
}

/**
 * Whether `error`, a PostgreSQL error with a well-formed SQLSTATE, ended its
 * session or refused to start one, whatever the code: severity `FATAL` or
 * `PANIC` (PostgreSQL: "an error that caused the current session to abort"),
 * or raised where a session starts (routine `InitPostgres`, or
 * {@link SESSION_START_FILE}), which also tells a server that words the
 * severity in another language. E.g. `55000` "database … is not currently
 * accepting connections", `42501` no `CONNECT` privilege, `25P03` an idle
 * transaction's timeout. The same codes raised at `ERROR` on a working
 * session (`55000` of `currval` before `nextval`) are the statement's own.
 */
function sessionEnded(error: Error, state: string): boolean {
  return /^[0-9A-Z]{5}$/.test(state) && endsSession(error);
}

/** Severity `FATAL` or `PANIC`, or raised where a session starts (routine `InitPostgres`, {@link SESSION_START_FILE}). */
function endsSession(error: Error): boolean {
  const { severity, routine, file } = error as {
    severity?: unknown;
    routine?: unknown;
    file?: unknown;
  };
  return (
    severity === 'FATAL' ||
    severity === 'PANIC' ||
    routine === 'InitPostgres' ||
    (typeof file === 'string' && SESSION_START_FILE.test(file))
  );
}

/**
 * SQLSTATE codes of a database that gave up on a statement (the failed
 * transaction is rolled back; what a handler committed before is its own
 * to know), for no fault of the server's code: `40001`
 * (serialization_failure), `40P01` (deadlock_detected), `55P03`
 * (lock_not_available: `lock_timeout`), `57014` (query_canceled: a cancel
 * or `statement_timeout`, which a statement the caller made expensive also
 * meets), class `53` (insufficient resources: disk full, out of memory), and
 * `58000`/`58030` (system and I/O errors).
 */
const GAVE_UP = /^(40001|40P01|55P03|57014|53[0-9A-Z]{3}|58000|58030)$/;

/**
 * What node-postgres says, without a code, of a connection that is gone or
 * gave no answer in its `query_timeout`, and what pg-pool says when no
 * connection came free in `connectionTimeoutMillis` or the pool was ended
 * (a server shutting down).
 */
const PG_CONNECTION_GONE =
  /^(Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect|Query read timeout|Cannot use a pool after calling end on the pool)$/;

/**
 * The brand a library sets (`true`, with `Object.defineProperty`) on an error
 * of its own that means a service could not be reached, such as the deadline
 * error of `pgPoolDriver` in `@mrtr/sql`; a registry symbol, so a library
 * need not depend on this package to set it.
 */
export const SERVICE_UNAVAILABLE: unique symbol = Symbol.for('@mrtr/wire/serviceUnavailable');

/** `08007` (transaction_resolution_unknown): the connection was lost waiting for `COMMIT`'s answer. */
const COMMIT_UNKNOWN = '08007';

/**
 * The `-32603` (HTTP 503 by the endpoint's status table) a thrown error
 * becomes when it, or an `Error` of its `cause` chain (at most 4 links), says
 * a database or service could not be reached: a Node system error (one with
 * a `syscall`) whose code is `ECONNREFUSED`, `ECONNRESET`, `EPIPE`,
 * `ETIMEDOUT`, `EHOSTUNREACH`, `ENETUNREACH`, `ENOTFOUND` or `EAI_AGAIN`; a
 * SQLSTATE that ends the session (see above; `@mrtr/sql`'s
 * `ConnectionLostError` and `NoConnectionError` carry one), any PostgreSQL
 * error that ended its session or refused to start one (severity `FATAL` or
 * `PANIC`, or raised where a session starts); a refusal of a new session
 * ({@link sessionRefusedByConfiguration}); node-postgres's "Connection
 * terminated…", "… not queryable" and "Query read timeout", and pg-pool's
 * "timeout exceeded when trying to connect" (every client busy) and "Cannot
 * use a pool after calling end on the pool"; an error branded
 * {@link SERVICE_UNAVAILABLE} (`pgPoolDriver`'s deadline); and, worded as
 * a database that gave up (a conflict, a timeout, a cancel, no resources;
 * the request may be retried), a SQLSTATE that ends a statement without a
 * bug of the server's (see above: deadlock, serialization failure, lock or
 * statement timeout, cancel, resources). As for an unreachable database,
 * whether anything was changed only the handler knows: the message does not say. Only `Error` objects count: a plain
 * object a tool built from request data is no outage. The message names no
 * code and nothing of the error (which may name hosts, and would tell a
 * caller probing a network one failure from another); whether anything was
 * changed only the handler knows, so it says nothing of that, except for
 * `08007` (lost at `COMMIT`): the change may or may not have been made.
 * `undefined` for any other error, and for one that throws while it is read
 * (a getter, a `Proxy`): never throws. JSON-RPC 2.0 leaves `-32603`
 * "Internal error" to the server; this only words it.
 */
export function serviceUnavailable(error: unknown): McpError | undefined {
  try {
    let current = error;
    for (let i = 0; i <= MAX_CAUSES && current instanceof Error; i++) {
      const state = sqlStateOf(current) ?? ownCode(current, /^\d[0-9A-Z]{4}$/);
      if (state === COMMIT_UNKNOWN)
        return new McpError(
          ErrorCode.InternalError,
          'The database stopped answering while a change was being committed: it may or may not have been made. Check before retrying.',
        );
      const socket =
        typeof (current as { syscall?: unknown }).syscall === 'string'
          ? ownCode(current, /^E[A-Z_]+$/)
          : undefined;
      if (
        (current as { [SERVICE_UNAVAILABLE]?: unknown })[SERVICE_UNAVAILABLE] === true ||
        (state !== undefined && (SESSION_LOST.test(state) || sessionEnded(current, state))) ||
        sessionRefusedByConfiguration(current) ||
        (socket !== undefined && UNREACHABLE.has(socket)) ||
        PG_CONNECTION_GONE.test(current.message)
      )
        return new McpError(
          ErrorCode.InternalError,
          'Service unavailable: a database or service this tool needs could not be reached. Retry later.',
        );
      if (state !== undefined && GAVE_UP.test(state))
        return new McpError(
          ErrorCode.InternalError,
          'Service unavailable: the database gave up on this request before it finished (a conflict with another request, a timeout, a cancel, or a lack of resources on its side). Retry later.',
        );
      current = current.cause;
    }
  } catch {
    // An error that throws as it is read is no connection failure we can name.
  }
  return undefined;
}

/** `error.code` when it is a string of that shape (a `ConnectionLostError`'s SQLSTATE, Node's `ECONNREFUSED`). */
function ownCode(error: unknown, shape: RegExp): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && shape.test(code) ? code : undefined;
}
