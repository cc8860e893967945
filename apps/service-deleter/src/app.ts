import { DEFAULT_AUDIT_TABLE, migrateAuditTable, PostgresAuditSink } from '@mrtr/audit';
import {
  bearerAuthenticator,
  listen,
  type RunningServer,
  type Sweep,
  startSweeper,
} from '@mrtr/example-kit';
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
   * How long rows of table `mrtr_audit` are kept, in milliseconds (default 30
   * days): `startServiceDeleter` sweeps older ones. An in-memory database
   * keeps at most {@link MEMORY_AUDIT_MAX_ROWS} of them as well.
   */
  auditRetentionMs?: number;
  /**
   * Clock of the ticket sealer, milliseconds since the epoch (default
   * `Date.now`): sets `iat`/`exp` of new tickets and judges expiry. For
   * tests that need a ticket minted in the past.
   */
  now?: () => number;
}

/** Rows of `mrtr_audit` an in-memory database (`memory://`) keeps at most, the newest. */
export const MEMORY_AUDIT_MAX_ROWS = 100_000;

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
  return (await assemble(options)).endpoint;
}

/** The endpoint, and the tables that grow with it: the PostgreSQL replay store's and the audit table. */
async function assemble(
  options: ServiceDeleterOptions,
): Promise<{ endpoint: McpEndpoint; sweeps: Sweep[] }> {
  await migrate(options.db);
  const store = options.store ?? (await openReplayStore(options.db, undefined)).store;
  const sweeps: Sweep[] = [];
  // Redis expires its own keys; PostgreSQL rows wait for a sweep.
  if (store instanceof PostgresReplayStore)
    sweeps.push({ table: store.table, run: () => store.sweep() });
  const gate = new ConfirmationGate<Queryable | undefined>({
    sealer: new TicketSealer({
      keys: [{ kid: 'k1', secret: options.secret }],
      ...(options.now ? { now: options.now } : {}),
    }),
    store: store as ReplayStore<Queryable | undefined>,
    audit: await auditSinks(options, sweeps),
  });
  const endpoint = createMcpEndpoint({
    serverInfo: { name: 'mrtr-service-deleter', version: '0.1.0' },
    instructions:
      'Platform operations on services. delete_service, delete_volume and scale_to_zero ask a person to confirm before acting; trigger_deploy and the read tools do not.',
    tools: serviceTools(options.db, gate),
    authenticate: bearerAuthenticator(options.tokens),
  });
  return { endpoint, sweeps };
}

/**
 * Start the service deleter at `/mcp` on `host:port` (port 0 picks a free
 * one). Every `sweepIntervalMs` milliseconds (default 60 000), and once at
 * start, until `close()`: expired rows of a PostgreSQL replay store and, with
 * `auditTable`, rows of `mrtr_audit` past `auditRetentionMs` are deleted (on
 * PGlite the tables are vacuumed after, so an in-memory server stays bounded).
 */
export async function startServiceDeleter(
  options: ServiceDeleterOptions & { host?: string; port?: number; sweepIntervalMs?: number },
): Promise<RunningServer> {
  const { endpoint, sweeps } = await assemble(options);
  const sweeper = startSweeper(options.db, sweeps, options.sweepIntervalMs ?? 60_000);
  try {
    return await listen(endpoint, {
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 0,
      onClose: () => sweeper.stop(),
    });
  } catch (error) {
    await sweeper.stop();
    throw error;
  }
}

/**
 * The sinks of `options`: those given, then table `mrtr_audit` of `db` when
 * `auditTable` is set (its sweep added to `sweeps`).
 */
async function auditSinks(
  options: ServiceDeleterOptions,
  sweeps: Sweep[],
): Promise<AuditSink<Queryable | undefined>[]> {
  const sinks = [options.audit ?? []].flat() as AuditSink<Queryable | undefined>[];
  if (options.auditTable) {
    await migrateAuditTable(options.db);
    const table = new PostgresAuditSink(options.db, {
      ...(options.auditRetentionMs !== undefined ? { retentionMs: options.auditRetentionMs } : {}),
      ...(options.db.inMemory ? { maxRows: MEMORY_AUDIT_MAX_ROWS } : {}),
    });
    sinks.push(table);
    sweeps.push({ table: DEFAULT_AUDIT_TABLE, run: () => table.sweep() });
  }
  return sinks;
}
