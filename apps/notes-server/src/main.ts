#!/usr/bin/env node
/**
 * Settings (environment): PORT, HOST, DATABASE_URL, MRTR_TOKENS, MRTR_PAGE_USERS (the approval
 * page's passwords), MRTR_SECRET (see the root README),
 * MRTR_AUDIT_FILE (JSON lines appended there instead of stdout), MRTR_AUDIT_TABLE=off (no table
 * mrtr_audit), MRTR_AUDIT_RETENTION_DAYS (how long rows of mrtr_audit are kept, default 30; swept
 * every minute).
 */
import { JsonLinesAuditSink } from '@mrtr/audit';
import { announcePageUsers, readServerEnv, runServer } from '@mrtr/example-kit';
import { startNotesServer } from './app.js';
import { openDatabase } from './db.js';

runServer('notes-server', async () => {
  const env = readServerEnv(process.env, 3000);
  const db = await openDatabase(env.databaseUrl, { timeoutMs: env.databaseTimeoutMs });
  // The audit trail: JSON lines on stdout, or appended to MRTR_AUDIT_FILE; and table mrtr_audit.
  const trail = new JsonLinesAuditSink({ destination: env.auditTo });
  const running = await startNotesServer({
    db,
    tokens: env.tokens,
    secret: env.secret,
    secretKid: env.secretKid,
    openKey: env.openKey,
    audit: trail,
    auditTable: env.auditTable,
    auditRetentionMs: env.auditRetentionMs,
    ...(env.rateLimit !== undefined ? { rateLimit: env.rateLimit } : {}),
    host: env.host,
    port: env.port,
    ...(env.publicOrigin ? { publicOrigin: env.publicOrigin } : {}),
    // Unset (MRTR_TOKENS without MRTR_PAGE_USERS): the page takes the bearer tokens; warned below.
    ...(env.pageUsers ? { pageUsers: env.pageUsers } : {}),
  });
  console.log(`notes-server listening on ${running.url} (data: ${db.description})`);
  // The replay store is always the notes database itself: each confirmation's nonce is
  // claimed in the transaction that deletes the note (table mrtr_replay, swept every minute).
  console.log('replay store: table mrtr_replay in the same database, claimed with each delete');
  console.log(
    `audit trail: JSON lines to ${env.auditTo}${env.auditTable ? `; table mrtr_audit, written with each delete, kept ${env.auditRetentionMs / 86_400_000} days` : ''}`,
  );
  if (env.generatedToken) {
    console.log(
      `principal "local" token: ${env.generatedToken}\n  export MRTR_TOKEN=${env.generatedToken}`,
    );
  }
  announcePageUsers(env, running.origin);
  return async () => {
    await running.close();
    await db.close();
    await trail.close();
  };
});
