#!/usr/bin/env node
/**
 * Settings (environment): PORT, HOST, DATABASE_URL, MRTR_TOKENS, MRTR_PAGE_USERS (the approval
 * page's passwords), MRTR_SECRET (see the root README),
 * MRTR_AUDIT_FILE (JSON lines appended there instead of stdout), MRTR_AUDIT_TABLE=off (no table
 * mrtr_audit), MRTR_AUDIT_RETENTION_DAYS (how long rows of mrtr_audit are kept, default 30; swept
 * every minute), REDIS_URL (the replay store in Redis instead of table mrtr_replay),
 * MRTR_REDIS_DURABILITY (what that Redis must keep: aof-always, aof-everysec or volatile),
 * MRTR_RECEIPT_KEY / MRTR_RECEIPT_KID / MRTR_RECEIPT_PUBLIC_KEYS (the Ed25519 key that signs
 * approval receipts, and keys that only verify; see the README).
 */
import { JsonLinesAuditSink } from '@mrtr/audit';
import { announcePageUsers, readServerEnv, runServer } from '@mrtr/example-kit';
import { REDIS_DURABILITIES, type RedisDurability } from '@mrtr/replay-redis';
import { openReplayStore, startServiceDeleter } from './app.js';
import { openDatabase } from './db.js';
import { receiptKeysFromEnv } from './receipt-keys.js';

runServer('service-deleter', async () => {
  const env = readServerEnv(process.env, 3001);
  const receipts = await receiptKeysFromEnv(process.env);
  if (receipts.generated)
    console.warn(
      'notice: MRTR_RECEIPT_KEY is not set; approval receipts are signed with a fresh key for this process only (see the README to make one).',
    );
  const db = await openDatabase(env.databaseUrl, { timeoutMs: env.databaseTimeoutMs });
  const replay = await openReplayStore(
    process.env.REDIS_URL,
    // Unset: a Redis without appendonly yes + appendfsync always is refused.
    redisDurabilityOf(process.env.MRTR_REDIS_DURABILITY),
  );
  // The audit trail: JSON lines on stdout, or appended to MRTR_AUDIT_FILE; and table mrtr_audit.
  const trail = new JsonLinesAuditSink({ destination: env.auditTo });
  const running = await startServiceDeleter({
    db,
    tokens: env.tokens,
    secret: env.secret,
    secretKid: env.secretKid,
    openKey: env.openKey,
    receiptKeys: receipts.keys,
    ...(replay.store ? { store: replay.store } : {}),
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
  console.log(
    `service-deleter listening on ${running.url} (data: ${db.description}; replay store: ${process.env.REDIS_URL ? 'Redis' : 'PostgreSQL'})`,
  );
  // WebAuthn's relying party is a domain: browsers refuse passkeys on an IP address.
  const pageHost = new URL(running.origin).hostname;
  if (/^[\d.]+$|^\[/.test(pageHost))
    console.log(
      `notice: passkeys (production deletes) need a name, not ${pageHost}: set MRTR_PUBLIC_ORIGIN=http://localhost:${new URL(running.origin).port}`,
    );
  console.log(
    `approval receipts: signed by key ${receipts.kid}, public keys at ${running.origin.replace(/\/$/, '')}/.well-known/jwks.json`,
  );
  console.log(
    `audit trail: JSON lines to ${env.auditTo}${env.auditTable ? `; table mrtr_audit in the services database, kept ${env.auditRetentionMs / 86_400_000} days` : ''}`,
  );
  if (env.generatedToken) {
    console.log(
      `principal "local" token: ${env.generatedToken}\n  export MRTR_TOKEN=${env.generatedToken}`,
    );
  }
  announcePageUsers(env, running.origin);
  return async () => {
    await running.close();
    await replay.close();
    await db.close();
    await trail.close();
  };
});

/** `MRTR_REDIS_DURABILITY` as the store names it; unset or empty: the store's default. */
function redisDurabilityOf(value: string | undefined): RedisDurability | undefined {
  if (!value) return undefined;
  const known = REDIS_DURABILITIES.find((d) => d === value);
  if (known) return known;
  throw new Error(
    `MRTR_REDIS_DURABILITY must be one of ${REDIS_DURABILITIES.join(', ')}; got ${JSON.stringify(value)}`,
  );
}
