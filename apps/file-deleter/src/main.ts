#!/usr/bin/env node
import { JsonLinesAuditSink } from '@mrtr/audit';
import { readServerEnv, runServer } from '@mrtr/example-kit';
import { DEFAULT_FILES_ROOT, seedDemoFiles, startFileDeleter } from './app.js';
import { openDatabase } from './db.js';

runServer('file-deleter', async () => {
  const env = readServerEnv(process.env, 3002);
  // Unset FILES_ROOT: the demo folder, seeded on first start. A FILES_ROOT given must exist.
  const root = process.env.FILES_ROOT || DEFAULT_FILES_ROOT;
  const seeded = !process.env.FILES_ROOT && (await seedDemoFiles(root));
  const db = await openDatabase(env.databaseUrl, { timeoutMs: env.databaseTimeoutMs });
  // The audit trail: JSON lines on stdout, or appended to MRTR_AUDIT_FILE; and table mrtr_audit.
  const trail = new JsonLinesAuditSink({ destination: env.auditTo });
  const running = await startFileDeleter({
    db,
    root,
    tokens: env.tokens,
    secret: env.secret,
    secretKid: env.secretKid,
    openKey: env.openKey,
    audit: trail,
    auditTable: env.auditTable,
    host: env.host,
    port: env.port,
  });
  console.log(`files root: ${root}${seeded ? ' (demo files seeded: notes.txt, todo.md, …)' : ''}`);
  console.log(`file-deleter listening on ${running.url} (data: ${db.description})`);
  console.log('replay store: table mrtr_replay in the same database, claimed with each deletion');
  console.log(
    `audit trail: JSON lines to ${env.auditTo}${env.auditTable ? '; table mrtr_audit, written with each deletion' : ''}`,
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
