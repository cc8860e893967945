#!/usr/bin/env node
import { JsonLinesAuditSink } from '@mrtr/audit';
import { randomToken } from '@mrtr/example-kit';
import { openReplayStore, parseTokens, randomSecret, startServiceDeleter } from './app.js';
import { openDatabase } from './db.js';

async function main() {
  const env = process.env;
  let tokens: Map<string, string>;
  let generated: string | undefined;
  if (env.MRTR_TOKENS) {
    tokens = parseTokens(env.MRTR_TOKENS);
  } else {
    generated = randomToken();
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
  const replay = await openReplayStore(db, env.REDIS_URL);
  // The audit trail: JSON lines on stdout, or appended to MRTR_AUDIT_FILE; and table mrtr_audit.
  const trailTo = env.MRTR_AUDIT_FILE || 'stdout';
  const trail = new JsonLinesAuditSink({ destination: trailTo });
  const auditTable = env.MRTR_AUDIT_TABLE !== 'off';
  const running = await startServiceDeleter({
    db,
    tokens,
    secret,
    store: replay.store,
    audit: trail,
    auditTable,
    host: env.HOST ?? '127.0.0.1',
    port: env.PORT ? Number(env.PORT) : 3001,
  });
  console.log(
    `service-deleter listening on ${running.url} (data: ${db.description}; replay store: ${env.REDIS_URL ? 'Redis' : 'PostgreSQL'})`,
  );
  console.log(
    `audit trail: JSON lines to ${trailTo}${auditTable ? '; table mrtr_audit in the services database' : ''}`,
  );
  if (generated)
    console.log(`principal "local" token: ${generated}\n  export MRTR_TOKEN=${generated}`);
  const stop = async () => {
    await running.close();
    await replay.close();
    await db.close();
    trail.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error) => {
  console.error(
    `service-deleter failed to start: ${error instanceof Error ? error.message : error}`,
  );
  process.exit(1);
});
