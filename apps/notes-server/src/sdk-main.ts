#!/usr/bin/env node
/**
 * The notes server on the official MCP SDK through `@mrtr/sdk`
 * (`pnpm start:sdk`): the same settings, data and `notes_delete` as
 * `main.ts`, for 2026-07-28 clients and for 2025-era clients (sessions).
 */
import { JsonLinesAuditSink } from '@mrtr/audit';
import { readServerEnv, runServer } from '@mrtr/example-kit';
import { openDatabase } from './db.js';
import { startNotesSdkServer } from './sdk-app.js';

runServer('notes-server (SDK)', async () => {
  const env = readServerEnv(process.env, 3000);
  const db = await openDatabase(env.databaseUrl, { timeoutMs: env.databaseTimeoutMs });
  const trail = new JsonLinesAuditSink({ destination: env.auditTo });
  const running = await startNotesSdkServer({
    db,
    tokens: env.tokens,
    secret: env.secret,
    secretKid: env.secretKid,
    openKey: env.openKey,
    audit: trail,
    auditTable: env.auditTable,
    host: env.host,
    port: env.port,
  });
  console.log(`notes-server (SDK bridge) listening on ${running.url} (data: ${db.description})`);
  console.log(
    'clients: 2026-07-28 (versionNegotiation auto or pin), or 2025-era with elicitation on a session',
  );
  console.log('replay store: table mrtr_replay in the same database, claimed with each delete');
  console.log(
    `audit trail: JSON lines to ${env.auditTo}${env.auditTable ? '; table mrtr_audit, written with each delete' : ''}`,
  );
  // The SDK's handler has no per-principal limit of ours: say so rather than ignore the setting.
  if (env.rateLimit !== undefined)
    console.warn(
      'notice: MRTR_RATE_LIMIT is not applied by the SDK server (pnpm start applies it); limit calls in front of it',
    );
  // This entry point has no approval page: a URL-only client gets -32021 here (helper-160 L2).
  if (env.pageUsers !== undefined || env.publicOrigin !== undefined)
    console.warn(
      'notice: MRTR_PAGE_USERS and MRTR_PUBLIC_ORIGIN are not used by the SDK server, which has no approval page (pnpm start has one); a client that declares only URL elicitation gets -32021',
    );
  if (env.generatedToken) {
    console.log(
      `principal "local" token: ${env.generatedToken}\n  export MRTR_TOKEN=${env.generatedToken}`,
    );
  }
  return async () => {
    await running.close();
    await db.close();
    trail.close();
  };
});
