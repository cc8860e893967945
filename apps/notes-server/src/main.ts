#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
import { JsonLinesAuditSink } from '@mrtr/audit';
import { parseTokens, randomSecret, startNotesServer } from './app.js';
import { openDatabase } from './db.js';

async function main() {
  const env = process.env;
  let tokens: Map<string, string>;
  let generated: string | undefined;
  if (env.MRTR_TOKENS) {
    tokens = parseTokens(env.MRTR_TOKENS);
  } else {
    generated = randomBytes(24).toString('base64url');
    tokens = new Map([[generated, 'local']]);
  }
  let secret: Uint8Array | string;
  if (env.MRTR_SECRET) {
    secret = env.MRTR_SECRET;
  } else {
    secret = randomSecret();
    console.warn(
      'warning: MRTR_SECRET is not set; using a random ticket key. Confirmations die with this process and cannot be shared by two instances.',
    );
  }
  const db = await openDatabase(env.DATABASE_URL);
  // The audit trail: JSON lines on stdout, or appended to MRTR_AUDIT_FILE; and table mrtr_audit.
  const trailTo = env.MRTR_AUDIT_FILE || 'stdout';
  const trail = new JsonLinesAuditSink({ destination: trailTo });
  const auditTable = env.MRTR_AUDIT_TABLE !== 'off';
  const running = await startNotesServer({
    db,
    tokens,
    secret,
    audit: trail,
    auditTable,
    host: env.HOST ?? '127.0.0.1',
    port: env.PORT ? Number(env.PORT) : 3000,
  });
  console.log(`notes-server listening on ${running.url} (data: ${db.description})`);
  // The replay store is always the notes database itself: each confirmation's nonce is
  // claimed in the transaction that deletes the note (table mrtr_replay, swept every minute).
  console.log('replay store: table mrtr_replay in the same database, claimed with each delete');
  console.log(
    `audit trail: JSON lines to ${trailTo}${auditTable ? '; table mrtr_audit, written with each delete' : ''}`,
  );
  if (generated)
    console.log(`principal "local" token: ${generated}\n  export MRTR_TOKEN=${generated}`);
  const stop = async () => {
    await running.close();
    await db.close();
    trail.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error) => {
  console.error(`notes-server failed to start: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
