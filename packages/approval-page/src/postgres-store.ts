import type { PendingApproval } from '@mrtr/gate';
import type { SqlDriver } from '@mrtr/sql';
import { assertChallengeRequest, judgeChallenge } from './passkey-rules.js';
import type {
  ChallengeRequest,
  PasskeyCredential,
  PasskeyStore,
  PendingChallenge,
  RegistrationChallenge,
} from './passkey-store.js';
import { PostgresPasskeyRecords } from './postgres-passkeys.js';
import { type ApprovalTableOptions, approvalTables } from './postgres-tables.js';
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
  type ChallengeResult,
  type DecideRequest,
  type DecideResult,
  type FinalDecision,
  type SessionRecord,
  type StoredApproval,
} from './store.js';

export {
  type ApprovalTableOptions,
  DEFAULT_APPROVAL_TABLE,
  DEFAULT_CREDENTIAL_TABLE,
  DEFAULT_REGISTRATION_TABLE,
  DEFAULT_SESSION_TABLE,
  migrateApprovalTables,
} from './postgres-tables.js';

/** Options of {@link PostgresApprovalStore}. */
export interface PostgresApprovalStoreOptions extends ApprovalTableOptions {
  /** Clock, milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
}

const iso = (ms: number) => new Date(ms).toISOString();

interface ApprovalRow {
  approval: string;
  decision: string | null;
  challenge: string | null;
}

/**
 * The {@link ApprovalStore} on PostgreSQL (a `pg.Pool` or PGlite), in the
 * replay store's database: every instance that shares the database shares
 * approvals, decisions, sessions and passkeys. A decision is one
 * `UPDATE … WHERE decision IS NULL AND expires_at > now` (for a passkey
 * approval also `AND challenge = <the one verified>`, and it clears the
 * challenge): the first wins, and a challenge serves one decision.
 * Run {@link migrateApprovalTables} once before use and {@link sweep} from
 * time to time. Driver failures throw {@link ApprovalStoreUnavailableError}.
 */
export class PostgresApprovalStore implements ApprovalStore {
  readonly #driver: SqlDriver;
  readonly #now: () => number;
  /** Whether `now` was given: then sweeps go by it alone (tests of expiry), else never past the database's clock. */
  readonly #clockGiven: boolean;
  readonly #passkeys: PostgresPasskeyRecords;
  readonly #sql: Record<
    | 'open'
    | 'get'
    | 'decide'
    | 'challenge'
    | 'sweep'
    | 'sweepUpToDatabaseNow'
    | 'putS'
    | 'getS'
    | 'delS',
    string
  >;

  /** @throws {TypeError} for a table name that is not a plain identifier. */
  constructor(driver: SqlDriver, options: PostgresApprovalStoreOptions = {}) {
    const tables = approvalTables(options);
    const a = tables.approvals.sql;
    const s = tables.sessions.sql;
    this.#driver = driver;
    this.#now = options.now ?? Date.now;
    this.#clockGiven = options.now !== undefined;
    this.#passkeys = new PostgresPasskeyRecords((sql, p) => this.#run(sql, p), tables, this.#now);
    const sweep = (until: string) =>
      `WITH ${[a, s, tables.registrations.sql]
        .map((t, i) => `d${i} AS (DELETE FROM ${t} WHERE expires_at <= ${until} RETURNING 1)`)
        .join(', ')} SELECT (SELECT count(*) FROM d0) + (SELECT count(*) FROM d1)
        + (SELECT count(*) FROM d2) AS removed`;
    this.#sql = {
      open: `INSERT INTO ${a} (id, approval, expires_at) VALUES ($1, $2, $3::timestamptz)
        ON CONFLICT (id) DO NOTHING RETURNING 1 AS opened`,
      get: `SELECT approval, decision, challenge FROM ${a} WHERE id = $1`,
      decide: `UPDATE ${a} SET decision = $2, decided_at = $3::timestamptz, challenge = NULL
        WHERE id = $1 AND decision IS NOT DISTINCT FROM $5::text AND expires_at > $3::timestamptz
        AND ($4::text IS NULL OR challenge = $4::text) RETURNING 1 AS decided`,
      challenge: `UPDATE ${a} SET challenge = $2
        WHERE id = $1 AND decision IS NULL AND expires_at > $3::timestamptz RETURNING 1 AS set`,
      sweep: sweep('$1::timestamptz'),
      sweepUpToDatabaseNow: sweep('LEAST($1::timestamptz, now())'),
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
    return (await this.#read(id))?.stored;
  }

  /** See {@link ApprovalStore.decide}. */
  async decide(request: DecideRequest): Promise<DecideResult> {
    assertDecideRequest(request);
    const now = this.#now();
    const before = await this.#read(request.id);
    const verdict = judge(before?.stored, request, now);
    if ('refused' in verdict) return refusal(verdict);
    // A passkey decision holds only while the challenge it verified is still the pending one.
    const challenge = request.via === 'passkey' ? before?.challenge : null;
    // Recorded only over the decision read (none, or the approval a withdrawal replaces): the first wins.
    const { rows } = await this.#run(this.#sql.decide, [
      request.id,
      JSON.stringify(verdict.record),
      iso(now),
      challenge,
      before?.decision ?? null,
    ]);
    if (rows.length > 0) return { status: 'recorded', decision: verdict.record };
    // Lost to another decision or challenge (or the row was swept): report what is there now.
    const after = judge(await this.get(request.id), request, now);
    return 'refused' in after ? refusal(after) : { status: 'refused', reason: 'decided' };
  }

  /** See {@link ApprovalStore.setChallenge}. */
  async setChallenge(request: ChallengeRequest): Promise<ChallengeResult> {
    assertChallengeRequest(request);
    const now = this.#now();
    const verdict = judgeChallenge(await this.get(request.id), request, now);
    if ('refused' in verdict) return { status: 'refused', reason: verdict.refused };
    const json = JSON.stringify(verdict.keep);
    const { rows } = await this.#run(this.#sql.challenge, [request.id, json, iso(now)]);
    if (rows.length > 0) return { status: 'set', challenge: verdict.keep };
    const after = judgeChallenge(await this.get(request.id), request, now);
    return { status: 'refused', reason: 'refused' in after ? after.refused : 'decided' };
  }

  /**
   * See {@link ApprovalStore.sweep}: approvals, sessions and registrations, in one statement.
   * Without `now`, never later than the database's `now()` unless the store was given a clock:
   * every instance sweeps these tables, and one whose clock runs ahead would otherwise delete
   * approvals and sessions still live on the others.
   */
  async sweep(now?: number): Promise<number> {
    const sql = now === undefined && !this.#clockGiven ? 'sweepUpToDatabaseNow' : 'sweep';
    const { rows } = await this.#run<{ removed: number | string }>(this.#sql[sql], [
      iso(now ?? this.#now()),
    ]);
    return Number(rows[0]?.removed ?? 0);
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
    return row && this.#parse<SessionRecord>(row.session, 'session');
  }

  /** See {@link SessionStore.deleteSession}. */
  async deleteSession(key: string): Promise<void> {
    assertSession(key);
    await this.#run(this.#sql.delS, [key]);
  }

  /** See {@link PasskeyStore.addCredential}. */
  addCredential(credential: PasskeyCredential): Promise<boolean> {
    return this.#passkeys.addCredential(credential);
  }
  /** See {@link PasskeyStore.getCredential}. */
  getCredential(id: string): Promise<PasskeyCredential | undefined> {
    return this.#passkeys.getCredential(id);
  }
  /** See {@link PasskeyStore.listCredentials}. */
  listCredentials(principal: string): Promise<PasskeyCredential[]> {
    return this.#passkeys.listCredentials(principal);
  }
  /** See {@link PasskeyStore.updateCredentialCounter}: `UPDATE … WHERE counter = from`. */
  updateCredentialCounter(id: string, from: number, to: number): Promise<boolean> {
    return this.#passkeys.updateCredentialCounter(id, from, to);
  }
  /** See {@link PasskeyStore.deleteCredential}. */
  deleteCredential(id: string, principal: string): Promise<boolean> {
    return this.#passkeys.deleteCredential(id, principal);
  }
  /** See {@link PasskeyStore.putRegistrationChallenge}. */
  putRegistrationChallenge(key: string, challenge: RegistrationChallenge): Promise<void> {
    return this.#passkeys.putRegistrationChallenge(key, challenge);
  }
  /** See {@link PasskeyStore.takeRegistrationChallenge}. */
  takeRegistrationChallenge(key: string): Promise<RegistrationChallenge | undefined> {
    return this.#passkeys.takeRegistrationChallenge(key);
  }

  /** The approval row, parsed, with the pending challenge's text as stored (compared on decide). */
  async #read(
    id: string,
  ): Promise<
    { stored: StoredApproval; challenge: string | null; decision: string | null } | undefined
  > {
    const { rows } = await this.#run<ApprovalRow>(this.#sql.get, [id]);
    const row = rows[0];
    if (!row) return undefined;
    const stored: StoredApproval = {
      approval: this.#parse<PendingApproval>(row.approval, 'approval'),
      decision:
        row.decision === null ? undefined : this.#parse<FinalDecision>(row.decision, 'decision'),
      challenge:
        row.challenge === null
          ? undefined
          : this.#parse<PendingChallenge>(row.challenge, 'challenge'),
    };
    return { stored, challenge: row.challenge, decision: row.decision };
  }

  #parse<T>(text: string, what: string): T {
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new ApprovalStoreUnavailableError(`${what} row is not valid JSON`, { cause: error });
    }
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
