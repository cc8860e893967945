import { type SqlQueryable, sqlTableName } from '@mrtr/sql';

/** Default retention of the audit table: 30 days, in milliseconds. */
export const DEFAULT_AUDIT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * Longest retention {@link sweepAuditTable} takes: 1,000 years (of 365.25
 * days), in milliseconds. A longer one names a cutoff before the dates a
 * JavaScript `Date` or PostgreSQL's `timestamptz` can hold; to keep rows for
 * ever, do not sweep.
 */
export const MAX_AUDIT_RETENTION_MS = 1000 * 365.25 * 24 * 60 * 60 * 1000;

/** What {@link sweepAuditTable} deletes. */
export interface AuditRetention {
  /**
   * Delete the rows recorded (`recorded_at`) more than this many milliseconds
   * before `now` (default {@link DEFAULT_AUDIT_RETENTION_MS}, 30 days; at most
   * {@link MAX_AUDIT_RETENTION_MS}).
   */
  olderThanMs?: number;
  /**
   * Then keep at most this many rows, the newest (by `id`); default: no cap.
   * For a table that lives in memory (in-memory PGlite).
   */
  maxRows?: number;
  /** Table name, optionally `schema.table` (default `mrtr_audit`). */
  table?: string;
  /** The time to count from, milliseconds since the epoch (default `Date.now()`). */
  now?: number;
  /** Rows deleted per statement (default 5 000): a long-unswept table is cleared in short statements. */
  batchSize?: number;
}

function positive(name: string, value: number, integer: boolean): number {
  if (!(value > 0) || !Number.isFinite(value) || (integer && !Number.isSafeInteger(value)))
    throw new RangeError(
      `${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`,
    );
  return value;
}

/**
 * `olderThanMs` when it is a positive number of milliseconds up to
 * {@link MAX_AUDIT_RETENTION_MS}.
 * @throws {RangeError} otherwise.
 */
export function retentionMs(name: string, value: number): number {
  positive(name, value, false);
  if (value > MAX_AUDIT_RETENTION_MS)
    throw new RangeError(
      `${name} must be at most ${MAX_AUDIT_RETENTION_MS} ms (1,000 years; to keep rows for ever, do not sweep), got ${value}`,
    );
  return value;
}

/**
 * Delete the audit rows past their retention: those recorded more than
 * `olderThanMs` before `now`, then the oldest beyond `maxRows` when given.
 * Deletes in batches of `batchSize` rows, each its own statement, so no
 * long lock is held. Needs `DELETE` on the table (see the README: the role
 * that sweeps is the only one that needs it).
 *
 * On PGlite, which runs no autovacuum, `VACUUM` the table after a sweep that
 * deleted rows, or the space they held is never reused.
 *
 * @param q where to delete (a driver of `@mrtr/sql`).
 * @returns how many rows were deleted.
 * @throws {RangeError} for an `olderThanMs`, `maxRows` or `batchSize` that is
 *   not positive, an `olderThanMs` over {@link MAX_AUDIT_RETENTION_MS}, or a
 *   `now` that is not a finite number; {TypeError} for a bad table name; the driver's error when a
 *   statement fails (the batches deleted before it stay deleted).
 */
export async function sweepAuditTable(
  q: SqlQueryable,
  options: AuditRetention = {},
): Promise<number> {
  const t = sqlTableName(options.table ?? 'mrtr_audit').sql;
  const olderThanMs = retentionMs('olderThanMs', options.olderThanMs ?? DEFAULT_AUDIT_RETENTION_MS);
  const batch = positive('batchSize', options.batchSize ?? 5000, true);
  const maxRows =
    options.maxRows === undefined ? undefined : positive('maxRows', options.maxRows, true);
  const now = options.now ?? Date.now();
  if (!Number.isFinite(now)) throw new RangeError(`now must be a finite number, got ${now}`);
  const cutoff = new Date(now - olderThanMs).toISOString();
  let removed = 0;
  const drain = async (sql: string, params: unknown[]) => {
    for (;;) {
      const { rows } = await q.query<{ removed: number }>(sql, params);
      const n = Number(rows[0]?.removed ?? 0);
      removed += n;
      if (n < batch) return;
    }
  };
  await drain(
    `WITH gone AS (DELETE FROM ${t} WHERE id IN (
       SELECT id FROM ${t} WHERE recorded_at < $1::timestamptz ORDER BY recorded_at LIMIT $2)
     RETURNING 1) SELECT count(*)::int AS removed FROM gone`,
    [cutoff, batch],
  );
  if (maxRows !== undefined) {
    // The id of the newest row past the cap; it and every older row go.
    await drain(
      `WITH edge AS (SELECT id FROM ${t} ORDER BY id DESC OFFSET $1 LIMIT 1),
       gone AS (DELETE FROM ${t} WHERE id IN (
         SELECT id FROM ${t} WHERE id <= (SELECT id FROM edge) ORDER BY id LIMIT $2)
       RETURNING 1) SELECT count(*)::int AS removed FROM gone`,
      [maxRows, batch],
    );
  }
  return removed;
}
