import { migrateAuditTable, PostgresAuditSink } from '@mrtr/audit-postgres';
import {
  atStartUp,
  bearerAuthenticator,
  listen,
  type RunningServer,
  type TicketKeyOption,
  ticketKeys,
} from '@mrtr/example-kit';
import { type AuditSink, ConfirmationGate } from '@mrtr/gate';
import { LedgerReplayStore, type ReplayStore } from '@mrtr/replay';
import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
import { createMcpEndpoint, type McpEndpoint } from '@mrtr/server';
import { TicketSealer } from '@mrtr/ticket';
import type { Database, Queryable } from './db.js';
import { migrateDeletions, recover } from './deletions.js';
import { type FilesHooks, FilesRoot } from './root.js';
import { fileTools, type ToolHooks } from './tools.js';

export { parseTokens, type RunningServer, randomSecret } from '@mrtr/example-kit';
export { DEFAULT_FILES_ROOT, seedDemoFiles } from './seed.js';

/** Options of {@link createFileDeleterEndpoint}. */
export interface FileDeleterOptions {
  /** The database of the replay ledger, the deletions and the audit table (see `openDatabase`). */
  db: Database;
  /** The folder whose files may be deleted (it must exist); nothing outside it is ever reached. */
  root: string;
  /** Bearer token → principal id. */
  tokens: Map<string, string>;
  /** Master secret for tickets, at least 32 bytes. */
  secret: Uint8Array | string;
  /** The key id of `secret` (default `k1`; see `ticketKeys` of the example kit). */
  secretKid?: string | undefined;
  /** A ticket key that opens tickets but seals none, for rotating the key (see `ticketKeys`). */
  openKey?: TicketKeyOption | undefined;
  /**
   * A faster replay store shared by every instance (e.g. `RedisReplayStore`),
   * put in front of the ledger: a `PostgresReplayStore` in `db` (table
   * `mrtr_replay`) whose claim commits in the transaction that records the
   * deletion, so a front store that forgets can never make a file go twice.
   */
  store?: ReplayStore<void> | ReplayStore<undefined>;
  /** Audit sinks (optional), e.g. `new JsonLinesAuditSink()` of `@mrtr/audit` (`GateAuditEvent` records). */
  audit?: AuditSink<Queryable> | readonly AuditSink<Queryable>[];
  /**
   * Also write the records to table `mrtr_audit` of `db`; the `completed` and
   * `declined` rows commit in the claim's transaction. Default `false`.
   */
  auditTable?: boolean;
  /** Clock of the ticket sealer, milliseconds since the epoch (default `Date.now`); for tests of expiry. */
  now?: () => number;
  /** For tests: code run in the windows a race or a crash would use. */
  hooks?: FilesHooks & ToolHooks;
}

/** The endpoint, and the recovery of what the trash holds. */
async function assemble(options: FileDeleterOptions): Promise<{
  endpoint: McpEndpoint;
  recover: () => Promise<unknown>;
  sweep: () => Promise<number>;
}> {
  const { db } = options;
  const root = await FilesRoot.open(options.root, options.hooks);
  await atStartUp(db, 'migrating mrtr_replay', () => migrateReplayTable(db));
  await atStartUp(db, 'migrating file_deletions', () => migrateDeletions(db));
  const ledger = new PostgresReplayStore(db);
  const store: ReplayStore<Queryable> = options.store
    ? new LedgerReplayStore(options.store, ledger)
    : ledger;
  const gate = new ConfirmationGate<Queryable>({
    sealer: new TicketSealer({
      keys: ticketKeys(options),
      ...(options.now ? { now: options.now } : {}),
    }),
    store,
    audit: await auditSinks(options),
  });
  // A crash may have left files in the trash: finish or put back each before serving.
  await atStartUp(db, 'recovering the trash', () => recover(db, root));
  const endpoint = createMcpEndpoint({
    serverInfo: { name: 'mrtr-file-deleter', version: '0.1.0' },
    instructions:
      'Files under one root folder. delete_file asks a person to type the path and give a reason before anything is deleted.',
    tools: fileTools(db, root, gate, options.hooks),
    authenticate: bearerAuthenticator(options.tokens),
  });
  return { endpoint, recover: () => recover(db, root), sweep: () => ledger.sweep() };
}

/**
 * Build the file deleter's MCP endpoint: tables migrated (`mrtr_replay`,
 * `file_deletions`, and `mrtr_audit` when asked), the trash recovered,
 * tool `delete_file`. Each of these steps that PostgreSQL stalls or drops is
 * told on stderr and run again (`atStartUp` of `@mrtr/example-kit`).
 * @throws when the root is not a folder, or the system has no `/proc/self/fd`.
 */
export async function createFileDeleterEndpoint(options: FileDeleterOptions): Promise<McpEndpoint> {
  return (await assemble(options)).endpoint;
}

/**
 * Start the file deleter at `/mcp` on `host:port` (port 0 picks a free one).
 * Every `sweepIntervalMs` milliseconds (default 60 000) until `close()`, the
 * trash is recovered and expired `mrtr_replay` rows are swept.
 */
export async function startFileDeleter(
  options: FileDeleterOptions & { host?: string; port?: number; sweepIntervalMs?: number },
): Promise<RunningServer> {
  const { endpoint, recover: recoverTrash, sweep } = await assemble(options);
  const sweeper = setInterval(() => {
    Promise.all([recoverTrash(), sweep()]).catch((error: unknown) =>
      console.warn(`file-deleter: recovery or replay sweep failed: ${String(error)}`),
    );
  }, options.sweepIntervalMs ?? 60_000);
  sweeper.unref();
  return listen(endpoint, {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    onClose: () => clearInterval(sweeper),
  });
}

/** The sinks of `options`: those given, then table `mrtr_audit` of `db` when `auditTable` is set. */
async function auditSinks(options: FileDeleterOptions): Promise<AuditSink<Queryable>[]> {
  const sinks = [options.audit ?? []].flat() as AuditSink<Queryable>[];
  if (options.auditTable) {
    await atStartUp(options.db, 'migrating mrtr_audit', () => migrateAuditTable(options.db));
    sinks.push(new PostgresAuditSink(options.db));
  }
  return sinks;
}
