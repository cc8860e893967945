/**
 * The PostgreSQL tables of the approval store: their names, and the
 * migration that creates them.
 */
import { type SqlDriver, type SqlTableName, sqlTableName as tableName } from '@mrtr/sql';

export { tableName };

/** Default table of the approvals. */
export const DEFAULT_APPROVAL_TABLE = 'mrtr_approvals';
/** Default table of the page's sign-in sessions. */
export const DEFAULT_SESSION_TABLE = 'mrtr_approval_sessions';
/** Default table of the registered passkeys. */
export const DEFAULT_CREDENTIAL_TABLE = 'mrtr_passkey_credentials';
/** Default table of the passkey registrations under way. */
export const DEFAULT_REGISTRATION_TABLE = 'mrtr_passkey_registrations';

/** Table names of {@link migrateApprovalTables} and {@link PostgresApprovalStore}. */
export interface ApprovalTableOptions {
  /** Approvals table, optionally `schema.table` (default `mrtr_approvals`); the schema must exist. */
  table?: string;
  /** Sessions table, optionally `schema.table` (default `mrtr_approval_sessions`). */
  sessionTable?: string;
  /** Passkeys table, optionally `schema.table` (default `mrtr_passkey_credentials`). */
  credentialTable?: string;
  /** Registrations under way, optionally `schema.table` (default `mrtr_passkey_registrations`). */
  registrationTable?: string;
}

/** The four tables, as quoted SQL (`sql`), their bare names (`bare`) and their index names (`index`). */
export function approvalTables(
  options: ApprovalTableOptions = {},
): Record<'approvals' | 'sessions' | 'credentials' | 'registrations', SqlTableName> {
  return {
    approvals: tableName(options.table ?? DEFAULT_APPROVAL_TABLE),
    sessions: tableName(options.sessionTable ?? DEFAULT_SESSION_TABLE),
    credentials: tableName(options.credentialTable ?? DEFAULT_CREDENTIAL_TABLE),
    registrations: tableName(options.registrationTable ?? DEFAULT_REGISTRATION_TABLE),
  };
}

/**
 * Create the approval, session and passkey tables and their indexes if they
 * are missing, and add the `challenge` column to an approvals table made
 * before passkeys (idempotent; concurrent calls are serialized with an
 * advisory lock). Rows are JSON text, not `jsonb`: a question may hold any
 * character, NUL included, which JSON text escapes and `jsonb` refuses.
 *
 * ```sql
 * CREATE TABLE mrtr_approvals (
 *   id          text PRIMARY KEY,       -- the opaque id in the approval URL
 *   approval    text NOT NULL,          -- the PendingApproval as opened (JSON)
 *   expires_at  timestamptz NOT NULL,   -- dies with the ticket; swept after
 *   decision    text,                   -- the decision (JSON); NULL while pending
 *   decided_at  timestamptz,
 *   challenge   text);                  -- the pending passkey challenge (JSON); NULL when none
 * CREATE TABLE mrtr_approval_sessions (
 *   key         text PRIMARY KEY,       -- SHA-256 of the session cookie (base64url)
 *   session     text NOT NULL,          -- principal and CSRF secret (JSON)
 *   expires_at  timestamptz NOT NULL);
 * CREATE TABLE mrtr_passkey_credentials (
 *   id          text PRIMARY KEY,       -- the WebAuthn credential id (base64url)
 *   principal   text NOT NULL,          -- whose passkey it is
 *   credential  text NOT NULL,          -- public key, transports, created (JSON)
 *   counter     bigint NOT NULL,        -- signature counter, compare-and-set
 *   created_at  timestamptz NOT NULL);
 * CREATE TABLE mrtr_passkey_registrations (
 *   key         text PRIMARY KEY,       -- derived from the sign-in session
 *   challenge   text NOT NULL,          -- challenge and principal (JSON)
 *   expires_at  timestamptz NOT NULL);
 * ```
 * @throws {TypeError} for a table name that is not a plain identifier; the driver's error when the statements fail.
 */
export async function migrateApprovalTables(
  driver: SqlDriver,
  options: ApprovalTableOptions = {},
): Promise<void> {
  const { approvals: a, sessions: s, credentials: c, registrations: r } = approvalTables(options);
  await driver.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `mrtr-approvals-migrate:${a.sql}`,
    ]);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${a.sql} (
      id text PRIMARY KEY, approval text NOT NULL, expires_at timestamptz NOT NULL,
      decision text, decided_at timestamptz, challenge text)`);
    await tx.query(`ALTER TABLE ${a.sql} ADD COLUMN IF NOT EXISTS challenge text`);
    await tx.query(`CREATE INDEX IF NOT EXISTS ${a.index('expires_at')} ON ${a.sql} (expires_at)`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${s.sql} (
      key text PRIMARY KEY, session text NOT NULL, expires_at timestamptz NOT NULL)`);
    await tx.query(`CREATE INDEX IF NOT EXISTS ${s.index('expires_at')} ON ${s.sql} (expires_at)`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${c.sql} (
      id text PRIMARY KEY, principal text NOT NULL, credential text NOT NULL,
      counter bigint NOT NULL, created_at timestamptz NOT NULL)`);
    await tx.query(
      `CREATE INDEX IF NOT EXISTS ${c.index('principal')} ON ${c.sql} (principal, created_at)`,
    );
    await tx.query(`CREATE TABLE IF NOT EXISTS ${r.sql} (
      key text PRIMARY KEY, challenge text NOT NULL, expires_at timestamptz NOT NULL)`);
    await tx.query(`CREATE INDEX IF NOT EXISTS ${r.index('expires_at')} ON ${r.sql} (expires_at)`);
  });
}
