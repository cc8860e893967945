-- @mrtr/audit-postgres: the audit table of @mrtr/gate (what migrateAuditTable runs for the default name).
-- One row per GateAuditEvent; the rounds of one operation share `nonce`.
-- Apply once per database: psql "$DATABASE_URL" -f 001_mrtr_audit.sql (idempotent).
-- The application role needs INSERT and SELECT only (REVOKE UPDATE, DELETE, TRUNCATE keeps it append-only);
-- the role that sweeps rows past their retention (sweepAuditTable) needs DELETE as well.

CREATE TABLE IF NOT EXISTS "mrtr_audit" (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  nonce text,
  outcome text NOT NULL,
  reason text,
  principal text NOT NULL,
  client json,
  method text NOT NULL,
  name text NOT NULL,
  arguments text NOT NULL,
  arguments_digest text NOT NULL,
  phase text NOT NULL,
  input_key text NOT NULL,
  question text,
  requested_schema json,
  answer_action text,
  answer_content json,
  is_error boolean,
  request_id json,
  trace_id text,
  span_id text,
  received_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS "mrtr_audit_nonce" ON "mrtr_audit" (nonce);

CREATE INDEX IF NOT EXISTS "mrtr_audit_recorded_at" ON "mrtr_audit" (recorded_at);
