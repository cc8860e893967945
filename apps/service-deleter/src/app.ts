import { migrateAuditTable, PostgresAuditSink } from '@mrtr/audit';
import { bearerAuthenticator, listen, type RunningServer } from '@mrtr/example-kit';
import { type AuditSink, ConfirmationGate } from '@mrtr/gate';
import type { ReplayStore } from '@mrtr/replay';
import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
import { RedisReplayStore } from '@mrtr/replay-redis';
import { createMcpEndpoint, type McpEndpoint } from '@mrtr/server';
import { TicketSealer } from '@mrtr/ticket';
import type { Database, Queryable } from './db.js';
import { migrate } from './services.js';
import { serviceTools } from './tools.js';

export { parseTokens, type RunningServer, randomSecret } from '@mrtr/example-kit';

/** Options of {@link createServiceDeleterEndpoint}. */
export interface ServiceDeleterOptions {
  /** The services database (see `openDatabase`). */
  db: Database;
  /** Bearer token → principal id. */
  tokens: Map<string, string>;
  /** Master secret for tickets, at least 32 bytes. */
  secret: Uint8Array | string;
  /**
   * Replay store shared by every instance. Default: a `PostgresReplayStore`
   * in `db` (table `mrtr_replay`), claiming inside the mutation's transaction.
   */
  store?: ReplayStore<void> | ReplayStore<Queryable | undefined>;
  /**
   * Audit sinks (optional), e.g. `new JsonLinesAuditSink()` of `@mrtr/audit`: each round of
   * a gated tool writes its records there (`GateAuditEvent` of `@mrtr/gate`).
   */
  audit?: AuditSink<Queryable | undefined> | readonly AuditSink<Queryable | undefined>[];
  /**
   * Also write the records to table `mrtr_audit` of `db` (created if missing). With the
   * default replay store, the `completed` and `declined` rows commit in the transaction that
   * claims the nonce and performs the mutation. Default `false`.
   */
  auditTable?: boolean;
  /**
   * Clock of the ticket sealer, milliseconds since the epoch (default
   * `Date.now`): sets `iat`/`exp` of new tickets and judges expiry. For
   * tests that need a ticket minted in the past.
   */
  now?: () => number;
}

/**
 * Choose the replay store: Redis when `redisUrl` is given, else PostgreSQL
 * in the services database. Both are shared by every instance that points at
 * the same Redis or database.
 * @throws when Redis or the database cannot be reached.
 */
export async function openReplayStore(
  db: Database,
  redisUrl: string | undefined,
): Promise<{
  store: ReplayStore<void> | ReplayStore<Queryable | undefined>;
  close: () => Promise<void>;
}> {
  if (redisUrl) {
    const store = await RedisReplayStore.connect(redisUrl, { keyPrefix: 'mrtr:service-deleter:' });
    return { store, close: () => store.close() };
  }
  await migrateReplayTable(db);
  return { store: new PostgresReplayStore(db), close: async () => {} };
}

/**
 * Build the service deleter's MCP endpoint: schema migrated, demo services
 * seeded on a new database, tools per the declared `POLICY`.
 */
export async function createServiceDeleterEndpoint(
  options: ServiceDeleterOptions,
): Promise<McpEndpoint> {
  await migrate(options.db);
  const store = options.store ?? (await openReplayStore(options.db, undefined)).store;
  const gate = new ConfirmationGate<Queryable | undefined>({
    sealer: new TicketSealer({
      keys: [{ kid: 'k1', secret: options.secret }],
      ...(options.now ? { now: options.now } : {}),
    }),
    store: store as ReplayStore<Queryable | undefined>,
    audit: await auditSinks(options),
  });
  return createMcpEndpoint({
    serverInfo: { name: 'mrtr-service-deleter', version: '0.1.0' },
    instructions:
      'Platform operations on services. delete_service, delete_volume and scale_to_zero ask a person to confirm before acting; trigger_deploy and the read tools do not.',
    tools: serviceTools(options.db, gate),
    authenticate: bearerAuthenticator(options.tokens),
    rateLimit: { limit: 300, windowMs: 60_000 }, // server/tools: servers MUST rate limit tool invocations
  });
}

/** Start the service deleter at `/mcp` on `host:port` (port 0 picks a free one). */
export async function startServiceDeleter(
  options: ServiceDeleterOptions & { host?: string; port?: number },
): Promise<RunningServer> {
  const endpoint = await createServiceDeleterEndpoint(options);
  return listen(endpoint, { host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
}

/** The sinks of `options`: those given, then table `mrtr_audit` of `db` when `auditTable` is set. */
async function auditSinks(
  options: ServiceDeleterOptions,
): Promise<AuditSink<Queryable | undefined>[]> {
  const sinks = [options.audit ?? []].flat() as AuditSink<Queryable | undefined>[];
  if (options.auditTable) {
    await migrateAuditTable(options.db);
    sinks.push(new PostgresAuditSink(options.db));
  }
  return sinks;
}
