-- @mrtr/audit-postgres: arguments over the gate's MAX_RECORDED_ARGUMENTS (16 KiB) are recorded
-- by their length alone (GateAuditEvent.argumentsLength), with arguments NULL.
-- Apply after 002 (idempotent): psql "$DATABASE_URL" -f 003_arguments_length.sql

ALTER TABLE "mrtr_audit" ALTER COLUMN arguments DROP NOT NULL;

ALTER TABLE "mrtr_audit" ADD COLUMN IF NOT EXISTS arguments_length integer;
