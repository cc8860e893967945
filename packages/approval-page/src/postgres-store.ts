import type { PendingApproval } from '@mrtr/gate';
import {
  assertDecideRequest,
  assertPendingApproval,
  assertSession,
  judge,
  pendingApproval,
  refusal,
  sameApproval,
} from './rules.js';
import {
  type ApprovalStore,
  ApprovalStoreUnavailableError,
  type DecideRequest,
  type DecideResult,
  type FinalDecision,
  type SessionRecord,
  type StoredApproval,
} from './store.js';

/** Runs one parameterized statement (`$1`, `$2`, … placeholders); rows keyed by column name. */
export interface SqlQueryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

/**
 * The SQL driver the PostgreSQL store runs on: statements, and transactions
 * (`fn` between `BEGIN` and `COMMIT`, rolled back when it throws). The same
 * shape as `SqlDriver` of `@mrtr/replay-postgres`, so its `pgPoolDriver`
 * (node-postgres `pg.Pool`) and `pgliteDriver` (PGlite) serve this store too,
 * on the replay store's own database.
 */
export interface SqlDriver extends SqlQueryable {
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
}

/** Default table of the approvals. */
export const DEFAULT_APPROVAL_TABLE = 'mrtr_approvals';
/** Default table of the page's sign-in sessions. */
export const DEFAULT_SESSION_TABLE = 'mrtr_approval_sessions';

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** A configured table name (`name` or `schema.name`) as quoted SQL; anything else is refused, never quoted. */
function tableName(table: string): { sql: string; bare: string } {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((p) => IDENTIFIER.test(p)))
    throw new TypeError(
      `table must be a lower-case identifier or schema.identifier, got ${JSON.stringify(table)}`,
    );
  return { sql: parts.map((p) => `"${p}"`).join('.'), bare: parts[parts.length - 1] as string };
}

/** Table names of {@link migrateApprovalTables} and {@link PostgresApprovalStore}. */
export interface ApprovalTableOptions {
  /** Approvals table, optionally `schema.table` (default `mrtr_approvals`); the schema must exist. */
  table?: string;
  /** Sessions table, optionally `schema.table` (default `mrtr_approval_sessions`). */
  sessionTable?: string;
}

/**
 * Create the approval and session tables and their expiry indexes if they
 * are missing (idempotent; concurrent calls are serialized with an advisory
 * lock). Rows are JSON text, not `jsonb`: a question may hold any character,
 * NUL included, which JSON text escapes and `jsonb` refuses.
 *
 * ```sql
 * CREATE TABLE mrtr_approvals (
 *   id          text PRIMARY KEY,       -- the opaque id in the approval URL
 *   approval    text NOT NULL,          -- the PendingApproval as opened (JSON)
 *   expires_at  timestamptz NOT NULL,   -- dies with the ticket; swept after
 *   decision    text,                   -- the decision (JSON); NULL while pending
 *   decided_at  timestamptz);
 * CREATE TABLE mrtr_approval_sessions (
 *   key         text PRIMARY KEY,       -- SHA-256 of the session cookie (base64url)
 *   session     text NOT NULL,          -- principal and CSRF secret (JSON)
 *   expires_at  timestamptz NOT NULL);
 * ```
 * @throws {TypeError} for a table name that is not a plain identifier; the driver's error when the statements fail.
 */
export async function migrateApprovalTables(
  driver: SqlDriver,
  options: ApprovalTableOptions = {},
): Promise<void> {
  const a = tableName(options.table ?? DEFAULT_APPROVAL_TABLE);
  const s = tableName(options.sessionTable ?? DEFAULT_SESSION_TABLE);
  await driver.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `mrtr-approvals-migrate:${a.sql}`,
    ]);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${a.sql} (
      id text PRIMARY KEY, approval text NOT NULL, expires_at timestamptz NOT NULL,
      decision text, decided_at timestamptz)`);
    await tx.query(`CREATE INDEX IF NOT EXISTS "${a.bare}_expires_at" ON ${a.sql} (expires_at)`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${s.sql} (
      key text PRIMARY KEY, session text NOT NULL, expires_at timestamptz NOT NULL)`);
    await tx.query(`CREATE INDEX IF NOT EXISTS "${s.bare}_expires_at" ON ${s.sql} (expires_at)`);
  });
}

/** Options of {@link PostgresApprovalStore}. */
export interface PostgresApprovalStoreOptions extends ApprovalTableOptions {
  /** Clock, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The {@link ApprovalStore} on PostgreSQL (a `pg.Pool` or PGlite), in the
 * replay store's database: every instance that shares the database shares
 * approvals, decisions and sessions. A decision is one
 * `UPDATE … WHERE decision IS NULL AND expires_at > now`: the first wins.
 * Run {@link migrateApprovalTables} once before use and {@link sweep} from
 * time to time. Driver failures throw {@link ApprovalStoreUnavailableError}.
 */
export class PostgresApprovalStore implements ApprovalStore {
  readonly #driver: SqlDriver;
  readonly #now: () => number;
  readonly #sql: Record<
    'open' | 'get' | 'decide' | 'sweepA' | 'sweepS' | 'putS' | 'getS' | 'delS',
    string
  >;

  /** @throws {TypeError} for a table name that is not a plain identifier. */
  constructor(driver: SqlDriver, options: PostgresApprovalStoreOptions = {}) {
    const a = tableName(options.table ?? DEFAULT_APPROVAL_TABLE).sql;
    const s = tableName(options.sessionTable ?? DEFAULT_SESSION_TABLE).sql;
    this.#driver = driver;
    this.#now = options.now ?? Date.now;
    const sweep = (t: string) => `WITH gone AS (DELETE FROM ${t} WHERE expires_at <= $1::timestamptz
      RETURNING 1) SELECT count(*)::int AS removed FROM gone`;
    this.#sql = {
      open: `INSERT INTO ${a} (id, approval, expires_at) VALUES ($1, $2, $3::timestamptz)
        ON CONFLICT (id) DO NOTHING RETURNING 1 AS opened`,
      get: `SELECT approval, decision FROM ${a} WHERE id = $1`,
      decide: `UPDATE ${a} SET decision = $2, decided_at = $3::timestamptz
        WHERE id = $1 AND decision IS NULL AND expires_at > $3::timestamptz RETURNING 1 AS decided`,
      sweepA: sweep(a),
      sweepS: sweep(s),
      putS: `INSERT INTO ${s} (key, session, expires_at) VALUES ($1, $2, $3::timestamptz)`,
      getS: `SELECT session FROM ${s} WHERE key = $1 AND expires_at > $2::timestamptz`,
      delS: `DELETE FROM ${s} WHERE key = $1`,
    };
  }

  /** See {@link ApprovalStore.open}. */
  async open(approval: PendingApproval): Promise<void> {
    assertPendingApproval(approval, this.#now());
    const row = pendingApproval(approval);
    const { rows } = await this.#run(this.#sql.open, [
      row.id,
      JSON.stringify(row),
      iso(row.expiresAt),
    ]);
    if (rows.length > 0) return;
    const existing = await this.get(row.id);
    if (existing && sameApproval(existing.approval, row)) return;
    throw new TypeError('approval id already opened with another approval');
  }

  /** See {@link ApprovalStore.get}. */
  async get(id: string): Promise<StoredApproval | undefined> {
    const { rows } = await this.#run<{ approval: string; decision: string | null }>(this.#sql.get, [
      id,
    ]);
    const row = rows[0];
    if (!row) return undefined;
    try {
      return {
        approval: JSON.parse(row.approval) as PendingApproval,
        decision: row.decision === null ? undefined : (JSON.parse(row.decision) as FinalDecision),
      };
    } catch (error) {
      throw new ApprovalStoreUnavailableError('approval row is not valid JSON', { cause: error });
    }
  }

  /** See {@link ApprovalStore.decide}. */
  async decide(request: DecideRequest): Promise<DecideResult> {
    assertDecideRequest(request);
    const now = this.#now();
    const verdict = judge(await this.get(request.id), request, now);
    if ('refused' in verdict) return refusal(verdict);
    const { rows } = await this.#run(this.#sql.decide, [
      request.id,
      JSON.stringify(verdict.record),
      iso(now),
    ]);
    if (rows.length > 0) return { status: 'recorded', decision: verdict.record };
    // Lost to another decision (or the row was swept): report what is there now.
    const after = judge(await this.get(request.id), request, now);
    return 'refused' in after ? refusal(after) : { status: 'refused', reason: 'decided' };
  }

  /** See {@link ApprovalStore.sweep}. */
  async sweep(now: number = this.#now()): Promise<number> {
    let removed = 0;
    for (const sql of [this.#sql.sweepA, this.#sql.sweepS]) {
      const { rows } = await this.#run<{ removed: number }>(sql, [iso(now)]);
      removed += Number(rows[0]?.removed ?? 0);
    }
    return removed;
  }

  /** See {@link SessionStore.createSession}. */
  async createSession(key: string, session: SessionRecord): Promise<void> {
    assertSession(key, session);
    const { principal, csrfSecret, expiresAt } = session;
    const value = JSON.stringify({ principal, csrfSecret, expiresAt });
    await this.#run(this.#sql.putS, [key, value, iso(expiresAt)]);
  }

  /** See {@link SessionStore.readSession}. */
  async readSession(key: string): Promise<SessionRecord | undefined> {
    assertSession(key);
    const { rows } = await this.#run<{ session: string }>(this.#sql.getS, [key, iso(this.#now())]);
    const row = rows[0];
    if (!row) return undefined;
    try {
      return JSON.parse(row.session) as SessionRecord;
    } catch (error) {
      throw new ApprovalStoreUnavailableError('session row is not valid JSON', { cause: error });
    }
  }

  /** See {@link SessionStore.deleteSession}. */
  async deleteSession(key: string): Promise<void> {
    assertSession(key);
    await this.#run(this.#sql.delS, [key]);
  }

  async #run<R>(sql: string, params: unknown[]): Promise<{ rows: R[] }> {
    try {
      return await this.#driver.query<R>(sql, params);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new ApprovalStoreUnavailableError(`PostgreSQL approval store failed: ${why}`, {
        cause: error,
      });
    }
  }
}
