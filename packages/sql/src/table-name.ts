import { createHash } from 'node:crypto';

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
/** PostgreSQL's longest identifier, bytes (`NAMEDATALEN` - 1); it cuts longer ones silently. */
const MAX_IDENTIFIER = 63;

/** A table name as {@link sqlTableName} returns it. */
export interface SqlTableName {
  /** The quoted name, `"schema"."name"` or `"name"`. */
  sql: string;
  /** The name without its schema. */
  bare: string;
  /**
   * The quoted name of an index (or constraint) of this table, `"<bare>_<suffix>"`,
   * kept within PostgreSQL's 63 bytes: a longer one is the bare name cut, 8 hex
   * characters of its SHA-256 and the suffix, so that it neither is cut by the
   * server into the table's own name or another index's (which `IF NOT EXISTS`
   * then skips) nor meets the index of another long name.
   * @param suffix lower-case letters, digits and `_` (e.g. `expires_at`), at most 40 characters.
   * @throws {TypeError} for another suffix.
   */
  index(suffix: string): string;
}

/**
 * A table name from configuration (`name` or `schema.name`, lower-case
 * letters, digits and `_`, at most 63 characters each: PostgreSQL's limit) as
 * quoted SQL, its bare name, and the names of its indexes. Table names
 * cannot be bound parameters, so anything else is refused rather than quoted.
 * @returns `{ sql: '"schema"."name"', bare: 'name', index }` ({@link SqlTableName}).
 * @throws {TypeError} naming the value, for any other shape.
 */
export function sqlTableName(table: string): SqlTableName {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((p) => IDENTIFIER.test(p)))
    throw new TypeError(
      `table must be a lower-case identifier or schema.identifier (letters, digits, _), got ${JSON.stringify(table)}`,
    );
  const bare = parts[parts.length - 1] as string;
  return {
    sql: parts.map((p) => `"${p}"`).join('.'),
    bare,
    index: (suffix) => indexName(bare, suffix),
  };
}

function indexName(bare: string, suffix: string): string {
  if (!/^[a-z0-9_]{1,40}$/.test(suffix))
    throw new TypeError(
      `index suffix must be 1 to 40 of a-z, 0-9 and _, got ${JSON.stringify(suffix)}`,
    );
  const whole = `${bare}_${suffix}`;
  if (whole.length <= MAX_IDENTIFIER) return `"${whole}"`;
  const hash = createHash('sha256').update(bare).digest('hex').slice(0, 8);
  return `"${bare.slice(0, MAX_IDENTIFIER - suffix.length - hash.length - 2)}_${hash}_${suffix}"`;
}
