-- @mrtr/audit-postgres: how each operation was confirmed, and its signed approval receipt.
-- Adds the columns to a table made by 001_mrtr_audit.sql (idempotent: nothing happens when they exist).
-- Apply after 001: psql "$DATABASE_URL" -f 002_receipt.sql

ALTER TABLE "mrtr_audit" ADD COLUMN IF NOT EXISTS confirmation text;

ALTER TABLE "mrtr_audit" ADD COLUMN IF NOT EXISTS receipt text;
