/**
 * A handler's database refusing the data it was given is the caller's
 * error, not the server's: U+0000 in a `text` value, a number out of a
 * column's range, a malformed date or UUID, a string over a `varchar(n)`,
 * a row that conflicts with one stored. The endpoint answers such a throw
 * with `-32602` instead of a 500, naming the SQLSTATE and nothing of the
 * database's message (which may quote stored data).
 */
import { ErrorCode, McpError } from '@mrtr/wire';

/**
 * SQLSTATE classes of a refused value (SQL standard, ISO/IEC 9075-2
 * "SQLSTATE"; PostgreSQL manual, appendix A): `22` data exception, `23`
 * integrity constraint violation.
 */
const REFUSED_DATA = /^2[23][0-9A-Z]{3}$/;

/** How many `cause` links are followed: a wrapper of a wrapper of the driver's error. */
const MAX_CAUSES = 4;

/**
 * The SQLSTATE of a database error, as drivers report it: `code` beside a
 * `severity` (node-postgres, PGlite, postgres.js), or `sqlState` (mysql2,
 * mariadb). `undefined` for any other value.
 */
function sqlStateOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { code?: unknown; severity?: unknown; sqlState?: unknown };
  if (typeof e.sqlState === 'string') return e.sqlState;
  if (typeof e.code === 'string' && typeof e.severity === 'string') return e.code;
  return undefined;
}

/**
 * The `-32602` a thrown error becomes when it, or an error in its `cause`
 * chain (at most 4 links), is a database refusing the data it was given
 * (SQLSTATE class 22 or 23), else `undefined`. The message names the class
 * and the code only; `data` is `{ sqlstate }`.
 */
export function databaseRefusal(error: unknown): McpError | undefined {
  let current = error;
  for (let i = 0; i <= MAX_CAUSES && current !== undefined && current !== null; i++) {
    const state = sqlStateOf(current);
    if (state !== undefined && REFUSED_DATA.test(state)) {
      const what = state.startsWith('22')
        ? 'a value of the request could not be stored'
        : 'the request conflicts with stored data';
      return new McpError(ErrorCode.InvalidParams, `Invalid params: ${what} (SQLSTATE ${state})`, {
        sqlstate: state,
      });
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
