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
import { createMcpEndpoint, type McpEndpoint } from '@mrtr/server';
import { TicketSealer } from '@mrtr/ticket';
import type { Database, Queryable } from './db.js';
import { migrate } from './notes.js';
import { notesTools } from './tools.js';

/** Options of {@link createNotesServer}. */
export interface NotesServerOptions {
  /** The database (see `openDatabase`). */
  db: Database;
  /** Bearer token → principal id. */
  tokens: Map<string, string>;
  /** Master secret for tickets, at least 32 bytes. */
  secret: Uint8Array | string;
  /**
   * Replay store shared by every instance. Default: a `PostgresReplayStore`
   * on `db` (table `mrtr_replay`), whose claim runs inside the transaction
   * that deletes the note. A store given here (e.g. `MemoryReplayStore`,
   * `RedisReplayStore`) cannot share that transaction: the delete then runs
   * in a transaction of its own after the claim.
   */
  store?: ReplayStore<undefined>;
  /**
   * Audit sinks (optional), e.g. `new JsonLinesAuditSink()` of `@mrtr/audit`: each round of
   * a gated tool writes its records there (`GateAuditEvent` of `@mrtr/gate`).
   */
  audit?: AuditSink<Queryable | undefined> | readonly AuditSink<Queryable | undefined>[];
  /**
   * Also write the records to table `mrtr_audit` of `db` (created if missing). With the
   * default replay store, the `completed` and `declined` rows commit in the transaction that
   * claims the nonce and deletes the note. Default `false`.
   */
  auditTable?: boolean;
  /**
   * How long rows of table `mrtr_audit` are kept, in milliseconds (default 30
   * days): `startNotesServer` sweeps older ones. An in-memory database keeps
   * at most {@link MEMORY_AUDIT_MAX_ROWS} of them as well.
   */
  auditRetentionMs?: number;
  /**
   * Clock of the ticket sealer, milliseconds since the epoch (default
   * `Date.now`): sets `iat`/`exp` of new tickets and judges expiry. For
   * tests that need a ticket minted in the past.
   */
  now?: () => number;
}

export {
  bearerAuthenticator,
  parseTokens,
  type RunningServer,
  randomSecret,
} from '@mrtr/example-kit';

/** Rows of `mrtr_audit` an in-memory database (`memory://`) keeps at most, the newest. */
export const MEMORY_AUDIT_MAX_ROWS = 100_000;

/**
 * The default replay store of the notes server: `mrtr_replay` in the notes
 * database itself (created if missing), so a nonce is claimed in the same
 * transaction as the delete and both commit or neither does.
 */
export async function openReplayStore(db: Database): Promise<PostgresReplayStore> {
  await migrateReplayTable(db);
  return new PostgresReplayStore(db);
}

/**
 * Build the notes MCP endpoint: schema migrated, demo data seeded on a new
 * database, tools `notes_create`, `notes_list` and the gated `notes_delete`.
 */
export async function createNotesEndpoint(options: NotesServerOptions): Promise<McpEndpoint> {
  return (await assemble(options)).endpoint;
}

/** The endpoint, and the tables that grow with it: the replay store's and the audit table. */
async function assemble(
  options: NotesServerOptions,
): Promise<{ endpoint: McpEndpoint; sweeps: Sweep[] }> {
  await migrate(options.db, [...new Set(options.tokens.values())]);
  const store = options.store ?? (await openReplayStore(options.db));
  const sweeps: Sweep[] = [];
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
    serverInfo: { name: 'mrtr-notes-server', version: '0.1.0' },
    instructions:
      'Notes in shared workspaces. notes_delete asks a person to choose and confirm the note before anything is deleted.',
    tools: notesTools(options.db, gate),
    authenticate: bearerAuthenticator(options.tokens),
  });
  return { endpoint, sweeps };
}

/**
 * Start the notes server on `host:port` (port 0 picks a free one) at path
 * `/mcp`. Every `sweepIntervalMs` milliseconds (default 60 000), and once at
 * start, until `close()`: expired rows of the PostgreSQL replay store and,
 * with `auditTable`, rows of `mrtr_audit` past `auditRetentionMs` are deleted
 * (on PGlite the tables are vacuumed after, so an in-memory server stays bounded).
 */
export async function startNotesServer(
  options: NotesServerOptions & { host?: string; port?: number; sweepIntervalMs?: number },
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
  options: NotesServerOptions,
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
