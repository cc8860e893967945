import { migrateAuditTable, PostgresAuditSink } from '@mrtr/audit';
import { bearerAuthenticator, listen, type RunningServer } from '@mrtr/example-kit';
import { type AuditSink, ConfirmationGate } from '@mrtr/gate';
import { LedgerReplayStore, type ReplayStore } from '@mrtr/replay';
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
   * A faster replay store shared by every instance (e.g. `RedisReplayStore`,
   * `MemoryReplayStore`), put in front of the ledger. The ledger is always a
   * `PostgresReplayStore` on `db` (table `mrtr_replay`) whose claim commits
   * in the transaction that deletes the note, so a store here that forgets
   * a record (Redis restarted empty) can never make a deletion run twice.
   */
  store?: ReplayStore<void> | ReplayStore<undefined>;
  /**
   * Audit sinks (optional), e.g. `new JsonLinesAuditSink()` of `@mrtr/audit`: each round of
   * a gated tool writes its records there (`GateAuditEvent` of `@mrtr/gate`).
   */
  audit?: AuditSink<Queryable> | readonly AuditSink<Queryable>[];
  /**
   * Also write the records to table `mrtr_audit` of `db` (created if missing). With the
   * default replay store, the `completed` and `declined` rows commit in the transaction that
   * claims the nonce and deletes the note. Default `false`.
   */
  auditTable?: boolean;
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

/** Who the notes server is, on every entry point. */
export const NOTES_SERVER_INFO = { name: 'mrtr-notes-server', version: '0.1.0' };
/** What it tells clients about itself. */
export const NOTES_INSTRUCTIONS =
  'Notes in shared workspaces. notes_delete asks a person to choose and confirm the note before anything is deleted.';

/**
 * What every entry point of the notes server shares: the database migrated
 * (and seeded when new), the gate on the ledger replay store in that
 * database (behind `options.store` when given), and the sweep of the ledger.
 */
export async function prepareNotes(
  options: NotesServerOptions,
): Promise<{ gate: ConfirmationGate<Queryable>; sweep: () => Promise<number> }> {
  await migrate(options.db, [...new Set(options.tokens.values())]);
  const ledger = await openReplayStore(options.db);
  const store: ReplayStore<Queryable> = options.store
    ? new LedgerReplayStore(options.store, ledger)
    : ledger;
  const gate = new ConfirmationGate<Queryable>({
    sealer: new TicketSealer({
      keys: [{ kid: 'k1', secret: options.secret }],
      ...(options.now ? { now: options.now } : {}),
    }),
    store,
    audit: await auditSinks(options),
  });
  return { gate, sweep: () => ledger.sweep() };
}

/** The endpoint, and the sweep of the default replay store when it is the one in use. */
async function assemble(
  options: NotesServerOptions,
): Promise<{ endpoint: McpEndpoint; sweep: () => Promise<number> }> {
  const { gate, sweep } = await prepareNotes(options);
  const endpoint = createMcpEndpoint({
    serverInfo: NOTES_SERVER_INFO,
    instructions: NOTES_INSTRUCTIONS,
    tools: notesTools(options.db, gate),
    authenticate: bearerAuthenticator(options.tokens),
  });
  return { endpoint, sweep };
}

/**
 * Start the notes server on `host:port` (port 0 picks a free one) at path
 * `/mcp`. Expired `mrtr_replay` rows are swept every `sweepIntervalMs`
 * milliseconds (default 60 000) until `close()`.
 */
export async function startNotesServer(
  options: NotesServerOptions & { host?: string; port?: number; sweepIntervalMs?: number },
): Promise<RunningServer> {
  const { endpoint, sweep } = await assemble(options);
  const sweeper = setInterval(() => {
    sweep().catch((error: unknown) => console.warn(`replay sweep failed: ${String(error)}`));
  }, options.sweepIntervalMs ?? 60_000);
  sweeper.unref();
  return listen(endpoint, {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    onClose: () => clearInterval(sweeper),
  });
}

/** The sinks of `options`: those given, then table `mrtr_audit` of `db` when `auditTable` is set. */
async function auditSinks(options: NotesServerOptions): Promise<AuditSink<Queryable>[]> {
  const sinks = [options.audit ?? []].flat() as AuditSink<Queryable>[];
  if (options.auditTable) {
    await migrateAuditTable(options.db);
    sinks.push(new PostgresAuditSink(options.db));
  }
  return sinks;
}
