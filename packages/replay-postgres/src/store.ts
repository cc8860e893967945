import {
  assertOnceRequest,
  type Json,
  MAX_EXPIRES_AT,
  type OnceRequest,
  type OnceResult,
  type ReplayStore,
  ReplayStoreUnavailableError,
} from '@mrtr/replay';
import { isOutcomeUnknown, type SqlDriver, type SqlQueryable, sqlTableName } from '@mrtr/sql';

/** Default table of the replay entries. */
export const DEFAULT_REPLAY_TABLE = 'mrtr_replay';

/**
 * Create the replay table and its expiry index if they are missing
 * (idempotent; concurrent calls are serialized with an advisory lock).
 *
 * ```sql
 * CREATE TABLE mrtr_replay (
 *   nonce          text PRIMARY KEY,      -- the ticket nonce: the unique index is the claim
 *   request_digest text NOT NULL,         -- what an identical re-issue must match
 *   expires_at     timestamptz NOT NULL,  -- when the entry may be swept
 *   outcome        text,                  -- JSON as recorded; NULL only before the claiming transaction commits
 *   claimed_at     timestamptz NOT NULL DEFAULT now());
 * CREATE INDEX mrtr_replay_expires_at ON mrtr_replay (expires_at);
 * ```
 *
 * @param driver where to create it (see `pgPoolDriver`, `pgliteDriver`).
 * @param options.table table name, optionally `schema.table` (default `mrtr_replay`); the schema must exist.
 * @throws {TypeError} for a table name that is not a plain identifier; the driver's error when the statements fail.
 */
export async function migrateReplayTable(
  driver: SqlDriver,
  options: { table?: string } = {},
): Promise<void> {
  const t = sqlTableName(options.table ?? DEFAULT_REPLAY_TABLE);
  await driver.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`mrtr-replay-migrate:${t.sql}`]);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${t.sql} (
      nonce text PRIMARY KEY,
      request_digest text NOT NULL,
      expires_at timestamptz NOT NULL,
      outcome text,
      claimed_at timestamptz NOT NULL DEFAULT now())`);
    await tx.query(`CREATE INDEX IF NOT EXISTS ${t.index('expires_at')} ON ${t.sql} (expires_at)`);
  });
}

/** Options of {@link PostgresReplayStore}. */
export interface PostgresReplayStoreOptions {
  /** Table created by {@link migrateReplayTable} (default `mrtr_replay`; `schema.table` allowed). */
  table?: string;
  /** Clock, milliseconds since the epoch (default `Date.now`): decides which entries have expired. */
  now?: () => number;
}

interface EntryRow {
  request_digest: string;
  outcome: string | null;
}

/**
 * Marks an error that came out of the caller's action, so it is rethrown
 * unchanged. An `Error` whose message and `cause` are the action's: a driver
 * that wraps it (a transaction that lost its connection) words the cause by
 * its message, and would otherwise say "[object Object]".
 */
class ActionFailure extends Error {
  override readonly name = 'ActionFailure';
  constructor(readonly error: unknown) {
    super(describeError(error), { cause: error });
  }
}

// From the year 10000 on, toISOString writes an expanded year ("+010000-…"), whose sign PostgreSQL
// refuses; without it the text is one PostgreSQL reads (every time up to MAX_EXPIRES_AT fits a timestamptz).
const iso = (ms: number) => new Date(ms).toISOString().replace(/^\+/, '');

/**
 * The {@link ReplayStore} contract on PostgreSQL, with the claim inside the
 * caller's transaction: the claim, the mutation and the recorded outcome
 * commit together or roll back together, so a crash, a lost connection or a
 * failed mutation never leaves a half-claimed nonce or a mutation without
 * its claim.
 *
 * The claim is `INSERT … ON CONFLICT (nonce) DO NOTHING`: the unique index
 * lets one transaction in, and a fresh nonce costs that one plain statement.
 * Only when the nonce is taken does the store send the upsert `INSERT … ON
 * CONFLICT (nonce) DO UPDATE … WHERE expired`, which takes over an expired
 * row (or claims a nonce a sweep freed meanwhile) and otherwise locks the
 * row, which is then read. A second presentation made while the first
 * transaction is open blocks on that index (or on the row, against a
 * takeover) until it ends, then sees the committed row: `replayed` with the
 * recorded outcome for an identical request, `refused` / `used` for another;
 * if the first rolled back, the second claims and performs. So the store
 * never answers `in_progress` to a caller of `once`. Needs READ COMMITTED
 * (PostgreSQL's default); under REPEATABLE READ or SERIALIZABLE the blocked
 * claim fails with a serialization error instead, reported as
 * {@link ReplayStoreUnavailableError}.
 *
 * Run {@link migrateReplayTable} once before use, and {@link sweep} from time
 * to time to delete expired rows.
 */
export class PostgresReplayStore implements ReplayStore<SqlQueryable> {
  readonly #driver: SqlDriver;
  readonly #now: () => number;
  /** Whether `now` was given: then sweeps go by it alone (tests of expiry), else never past the database's clock. */
  readonly #clockGiven: boolean;
  readonly #sql: {
    claim: string;
    takeover: string;
    read: string;
    record: string;
    sweep: string;
    sweepUpToDatabaseNow: string;
    settled: string;
  };
  /** The table of the entries, as configured (`name` or `schema.name`). */
  readonly table: string;

  /**
   * @param driver a `pg.Pool` or PGlite through `pgPoolDriver` / `pgliteDriver`.
   * @throws {TypeError} for a table name that is not a plain identifier.
   */
  constructor(driver: SqlDriver, options: PostgresReplayStoreOptions = {}) {
    this.table = options.table ?? DEFAULT_REPLAY_TABLE;
    const t = sqlTableName(this.table).sql;
    this.#driver = driver;
    this.#now = options.now ?? Date.now;
    this.#clockGiven = options.now !== undefined;
    this.#sql = {
      // Only an entry that is not already expired by the database's clock (contract, item 7): an
      // instance whose clock runs behind would claim a nonce whose record the others swept.
      claim: `INSERT INTO ${t} (nonce, request_digest, expires_at)
        SELECT $1::text, $2::text, $3::timestamptz WHERE $3::timestamptz > now()
        ON CONFLICT (nonce) DO NOTHING RETURNING 1 AS claimed`,
      // On conflict only: claims the nonce if its row expired (or is gone by now), else locks the row.
      takeover: `INSERT INTO ${t} AS r (nonce, request_digest, expires_at)
        SELECT $1::text, $2::text, $3::timestamptz WHERE $3::timestamptz > now()
        ON CONFLICT (nonce) DO UPDATE SET request_digest = EXCLUDED.request_digest,
          expires_at = EXCLUDED.expires_at, outcome = NULL, claimed_at = now()
        WHERE r.expires_at <= $4::timestamptz
        RETURNING 1 AS claimed`,
      read: `SELECT request_digest, outcome FROM ${t} WHERE nonce = $1`,
      settled: `SELECT request_digest, outcome FROM ${t}
        WHERE nonce = $1 AND outcome IS NOT NULL AND expires_at > $2::timestamptz`,
      record: `UPDATE ${t} SET outcome = $2 WHERE nonce = $1`,
      sweep: `WITH gone AS (DELETE FROM ${t} WHERE expires_at <= $1::timestamptz RETURNING 1)
        SELECT count(*)::int AS removed FROM gone`,
      sweepUpToDatabaseNow: `WITH gone AS (DELETE FROM ${t}
          WHERE expires_at <= LEAST($1::timestamptz, now()) RETURNING 1)
        SELECT count(*)::int AS removed FROM gone`,
    };
  }

  /**
   * See {@link ReplayStore.once}. Opens a transaction on the driver, claims
   * the nonce in it, runs `action(tx)` in it (do the mutation on `tx`), and
   * records the outcome in it before `COMMIT`.
   * @throws {TypeError} for a malformed request.
   * @throws {ReplayStoreUnavailableError} when PostgreSQL fails or the
   *   connection is lost anywhere in the transaction (the claim and the
   *   action's writes rolled back; after a lost `COMMIT` the outcome is
   *   unknown to this caller, and an identical retry gets `replayed` if it
   *   committed or performs if it did not).
   * @throws what `action` throws, unchanged, after rolling back.
   */
  async once<T extends Json>(
    request: OnceRequest,
    action: (tx: SqlQueryable) => Promise<T>,
  ): Promise<OnceResult<T>> {
    assertOnceRequest(request);
    const now = this.#now();
    let recorded: Promise<unknown> | undefined;
    try {
      const result = await this.#driver.transaction((tx) =>
        this.#claimed(tx, request, now, guarded(action), (pending) => {
          // Not awaited here: the driver's COMMIT follows it on the same connection
          // (one round trip when pipelined), and a failed UPDATE makes COMMIT fail.
          recorded = pending;
          pending.catch(() => {});
        }),
      );
      await recorded;
      return result;
    } catch (error) {
      throw unwrap(error, 'the claim and the operation were rolled back together');
    }
  }

  /**
   * Claim `request.nonce` inside the caller's open transaction `tx`, run
   * `fn(tx)` when the claim is won, and record its outcome, all in `tx`. The
   * caller commits; it must roll back when this throws, which also releases
   * the claim. On a lost claim `fn` does not run and the result is
   * `replayed` or `refused` (`in_progress` only if a committed claim has no
   * outcome, which happens when a caller committed after a throw).
   * @throws {TypeError} for a malformed request, or an outcome that is not JSON.
   * @throws {ReplayStoreUnavailableError} when a statement of the store fails.
   * @throws what `fn` throws, unchanged.
   */
  async withClaim<T extends Json>(
    tx: SqlQueryable,
    request: OnceRequest,
    fn: (tx: SqlQueryable) => Promise<T>,
  ): Promise<OnceResult<T>> {
    assertOnceRequest(request);
    try {
      let recorded: Promise<unknown> | undefined;
      const result = await this.#claimed(tx, request, this.#now(), guarded(fn), (pending) => {
        recorded = pending;
      });
      await recorded; // the caller commits next: the outcome must be written by then
      return result;
    } catch (error) {
      throw unwrap(error, 'roll the transaction back');
    }
  }

  /**
   * This store as a {@link ReplayStore} whose `once` claims inside `tx`, a
   * transaction the caller holds and commits: `once(request, action)` runs
   * {@link withClaim} under the savepoint `mrtr_claim`, so a claim whose
   * action throws (a refusal after the claim: target gone, level too low) is
   * taken back without aborting `tx`, and the claim otherwise commits or
   * rolls back with the caller's work. For an executor that checks a receipt
   * inside the transaction that already performs (`verifyAndRun` of
   * `@mrtr/receipt` in the gate's `perform`, with `tx` the gate's). Nothing
   * else may use `tx` while `once` is pending: its statements would fall
   * inside the savepoint and be undone with a refusal.
   * @param tx the caller's open transaction; statements run on it in order.
   * @returns a store whose `once` resolves as {@link withClaim}'s
   *   (`performed`, `replayed`, or `refused` for a nonce already used; no
   *   `sweep`).
   * @throws what the action throws, unchanged, once its claim is taken back.
   * @throws {ReplayStoreUnavailableError} when a statement of the store
   *   fails, or when the claim cannot be taken back (`ROLLBACK TO
   *   SAVEPOINT` failed: `tx` is unusable, roll it back; `cause` is the
   *   action's error).
   */
  inTransaction(tx: SqlQueryable): ReplayStore<SqlQueryable> {
    return {
      once: async (request, action) => {
        await this.#savepoint(tx, 'SAVEPOINT mrtr_claim');
        try {
          const result = await this.withClaim(tx, request, action);
          await this.#savepoint(tx, 'RELEASE SAVEPOINT mrtr_claim');
          return result;
        } catch (error) {
          try {
            await tx.query('ROLLBACK TO SAVEPOINT mrtr_claim');
          } catch (rollback) {
            throw new ReplayStoreUnavailableError(
              `PostgreSQL replay store could not take its claim back (ROLLBACK TO SAVEPOINT failed: ${describeError(rollback)}); roll the transaction back`,
              { cause: error },
            );
          }
          throw error;
        }
      },
    };
  }

  /** A savepoint statement; its failure is the store's (unavailable), not the action's. */
  async #savepoint(tx: SqlQueryable, sql: string): Promise<void> {
    try {
      await tx.query(sql);
    } catch (error) {
      throw unwrap(error, 'roll the transaction back');
    }
  }

  /**
   * See {@link ReplayStore.recorded}: the committed, unexpired entry of the
   * nonce, read with a plain `SELECT` (READ COMMITTED: an open claim is
   * neither waited for nor seen).
   * @throws {TypeError} for a malformed request.
   * @throws {ReplayStoreUnavailableError} when PostgreSQL fails.
   */
  async recorded<T extends Json>(request: OnceRequest): Promise<OnceResult<T> | undefined> {
    assertOnceRequest(request);
    let row: EntryRow | undefined;
    try {
      const { rows } = await this.#driver.query<EntryRow>(this.#sql.settled, [
        request.nonce,
        iso(this.#now()),
      ]);
      row = rows[0];
    } catch (error) {
      throw unwrap(error, 'nothing was changed');
    }
    if (!row || row.outcome === null) return undefined;
    if (row.request_digest !== request.requestDigest) return { status: 'refused', reason: 'used' };
    return { status: 'replayed', outcome: JSON.parse(row.outcome) as T };
  }

  /**
   * Delete every committed entry whose `expires_at` is at or before `now`
   * (milliseconds since the epoch). Without `now`, the store's clock, and
   * never later than the database's `now()` unless the store was given a
   * clock (`now` option): every instance sweeps one table, and one whose clock
   * runs ahead would otherwise delete the records of confirmations still
   * valid on the others. Rows of open transactions are not visible to it and
   * stay. A `now` that is `NaN` or before 0 deletes nothing.
   * @returns how many rows were deleted.
   * @throws the driver's error when PostgreSQL fails.
   */
  async sweep(now?: number): Promise<number> {
    const at = now ?? this.#now();
    // No entry expires before 0 (nor is any time past a broken clock's reading); none after MAX_EXPIRES_AT.
    if (!(at >= 0)) return 0;
    const until = iso(Math.min(at, MAX_EXPIRES_AT));
    const sql =
      now === undefined && !this.#clockGiven ? this.#sql.sweepUpToDatabaseNow : this.#sql.sweep;
    const { rows } = await this.#driver.query<{ removed: number }>(sql, [until]);
    return Number(rows[0]?.removed ?? 0);
  }

  async #claimed<T extends Json>(
    tx: SqlQueryable,
    request: OnceRequest,
    now: number,
    fn: (tx: SqlQueryable) => Promise<Serialized<T>>,
    record: (pending: Promise<unknown>) => void,
  ): Promise<OnceResult<T>> {
    // Rounded up: a Date drops a fraction of a millisecond, and no entry may be forgotten before its expiresAt.
    const claim = [request.nonce, request.requestDigest, iso(Math.ceil(request.expiresAt))];
    const won =
      (await tx.query(this.#sql.claim, claim)).rows.length > 0 ||
      // Taken by a committed row (the INSERT waited for an open one). The upsert takes it over if
      // it has expired, inserts if a sweep deleted it meanwhile, and otherwise locks it for the read.
      (await tx.query(this.#sql.takeover, [...claim, iso(now)])).rows.length > 0;
    if (!won) {
      const { rows } = await tx.query<EntryRow>(this.#sql.read, [request.nonce]);
      const row = rows[0];
      // Neither insert took it and no entry holds it: its expiresAt is past by the database's clock.
      if (!row) return { status: 'refused', reason: 'expired' };
      if (row.request_digest !== request.requestDigest)
        return { status: 'refused', reason: 'used' };
      if (row.outcome === null) return { status: 'refused', reason: 'in_progress' };
      return { status: 'replayed', outcome: JSON.parse(row.outcome) as T };
    }
    const { outcome, text } = await fn(tx);
    record(tx.query(this.#sql.record, [request.nonce, text]));
    return { status: 'performed', outcome };
  }
}

/** An outcome and its JSON text, serialized once: the check that it is JSON is the text recorded. */
interface Serialized<T> {
  outcome: T;
  text: string;
}

/** Wrap `fn` so that what it throws, or a non-JSON outcome, is told apart from the store's own failures. */
function guarded<T extends Json>(
  fn: (tx: SqlQueryable) => Promise<T>,
): (tx: SqlQueryable) => Promise<Serialized<T>> {
  return async (tx) => {
    let outcome: T;
    try {
      outcome = await fn(tx);
    } catch (error) {
      throw new ActionFailure(error);
    }
    let text: string | undefined;
    try {
      text = JSON.stringify(outcome);
    } catch {
      text = undefined; // BigInt or a cycle
    }
    if (text === undefined)
      throw new ActionFailure(new TypeError('the action must return a JSON value'));
    return { outcome, text };
  };
}

/** The action's own error unchanged; anything else as {@link ReplayStoreUnavailableError}. */
function unwrap(error: unknown, advice: string): unknown {
  if (error instanceof ActionFailure) return error.error;
  // Lost while waiting for COMMIT's answer: claim, action and outcome committed together or not at all.
  if (isOutcomeUnknown(error))
    return new ReplayStoreUnavailableError(
      `PostgreSQL replay store lost its connection at COMMIT; the claim and the operation committed together or not at all: ${describeError(error)}`,
      { cause: error, outcomeUnknown: true },
    );
  const code = (error as { code?: unknown } | null)?.code;
  if (code === '40001' || code === '40P01')
    // Not an outage: a concurrent transaction won (REPEATABLE READ or SERIALIZABLE, or a deadlock).
    return new ReplayStoreUnavailableError(
      `PostgreSQL replay store's transaction conflicted with a concurrent one (SQLSTATE ${code}${code === '40001' ? ', serialization failure: under READ COMMITTED a concurrent claim waits for the other transaction instead' : ', deadlock'}); ${advice}: ${describeError(error)}`,
      { cause: error },
    );
  return new ReplayStoreUnavailableError(
    `PostgreSQL replay store failed (${advice}): ${describeError(error)}`,
    { cause: error },
  );
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
