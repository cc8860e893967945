/**
 * A handler's database refusing the data it was given is the caller's
 * error, not the server's: U+0000 in a `text` value, a number out of a
 * column's range, a malformed date or UUID, a string over a `varchar(n)`,
 * a row that conflicts with one stored. `@mrtr/server`'s endpoint and
 * `@mrtr/sdk`'s bridge answer such a throw with `-32602` instead of a 500,
 * naming the SQLSTATE and nothing of the database's message (which may quote
 * stored data).
 */
import { ErrorCode, McpError } from './errors.js';
import { sqlStateOf } from './unavailable.js';

/**
 * SQLSTATE codes a database answers when a value it was given cannot be
 * stored or read as its column's type (SQL standard, ISO/IEC 9075-2
 * "SQLSTATE"; PostgreSQL manual, appendix A): of class 22 (data exception)
 * a string too long, a number out of range, a malformed or overflowing date,
 * a character the encoding has not (U+0000), text that is not of the type,
 * invalid JSON; of class 23 (integrity constraint) a unique, foreign-key or
 * check violation. Codes a server causes itself (division by zero, an
 * exhausted sequence, a NOT NULL column its own SQL forgot) are not here:
 * they stay internal errors.
 */
const REFUSED_DATA: ReadonlySet<string> = new Set([
  '22001', // string_data_right_truncation
  '22003', // numeric_value_out_of_range
  '22007', // invalid_datetime_format
  '22008', // datetime_field_overflow
  '22021', // character_not_in_repertoire
  '22P02', // invalid_text_representation
  '22P05', // untranslatable_character
  '22032', // invalid_json_text
  '23503', // foreign_key_violation
  '23505', // unique_violation
  '23514', // check_violation
]);

/** How many `cause` links are followed: a wrapper of a wrapper of the driver's error. */
const MAX_CAUSES = 4;

/**
 * The `-32602` a thrown error becomes when it, or an error in its `cause`
 * chain (at most 4 links), is a database refusing a value it was given
 * (one of the SQLSTATE codes above), else `undefined`. The message names the class
 * and the code only; `data` is `{ sqlstate }`. JSON-RPC 2.0 "Invalid params".
 */
export function databaseRefusal(error: unknown): McpError | undefined {
  let current = error;
  for (let i = 0; i <= MAX_CAUSES && current !== undefined && current !== null; i++) {
    const state = sqlStateOf(current);
    if (state !== undefined && REFUSED_DATA.has(state)) {
      const what = state.startsWith('22')
        ? 'the database refused a value'
        : 'the request conflicts with stored data';
      return new McpError(ErrorCode.InvalidParams, `Invalid params: ${what} (SQLSTATE ${state})`, {
        sqlstate: state,
      });
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
