const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * A table name from configuration (`name` or `schema.name`, lower-case
 * letters, digits and `_`, at most 63 characters each: PostgreSQL's limit) as
 * quoted SQL, and its bare name (for index and constraint names). Table names
 * cannot be bound parameters, so anything else is refused rather than quoted.
 * @returns `{ sql: '"schema"."name"', bare: 'name' }`
 * @throws {TypeError} naming the value, for any other shape.
 */
export function sqlTableName(table: string): { sql: string; bare: string } {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((p) => IDENTIFIER.test(p)))
    throw new TypeError(
      `table must be a lower-case identifier or schema.identifier (letters, digits, _), got ${JSON.stringify(table)}`,
    );
  return { sql: parts.map((p) => `"${p}"`).join('.'), bare: parts[parts.length - 1] as string };
}
