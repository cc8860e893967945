import { DEFAULT_AUDIT_TABLE, migrateAuditTable, PostgresAuditSink } from '@mrtr/audit-postgres';
import {
  atStartUp,
  bearerAuthenticator,
  exampleApprovals,
  listenApp,
  type RunningServer,
  type Sweep,
  startSweeper,
  type TicketKeyOption,
  ticketKeys,
} from '@mrtr/example-kit';
import { type ApprovalChannel, type AuditSink, ConfirmationGate } from '@mrtr/gate';
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
  /** The key id of `secret` (default `k1`; see `ticketKeys` of the example kit). */
  secretKid?: string | undefined;
  /** A ticket key that opens tickets but seals none, for rotating the key (see `ticketKeys`). */
  openKey?: TicketKeyOption | undefined;
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
   * How long rows of table `mrtr_audit` are kept, in milliseconds (default 30
   * days): the started server sweeps older ones. An in-memory database keeps
   * at most {@link MEMORY_AUDIT_MAX_ROWS} of them as well.
   */
  auditRetentionMs?: number;
  /**
   * Tool calls each principal may make per window (`@mrtr/server`'s
   * `rateLimit`; default 300 per 60 000 ms); `false` turns the limit off.
   */
  rateLimit?: { limit: number; windowMs: number } | false;
  /**
   * The approval page's channel (`@mrtr/approval-page`): with it,
   * `notes_delete` is confirmed by form where the client can show one and on
   * the page where it declares only URL elicitation (`form-or-url`).
   * `startNotesServer` serves a page and passes its channel.
   */
  approvals?: ApprovalChannel;
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
 * transaction as the delete and both commit or neither does. Its migration
 * waits for a database that stalls or drops the connection (`atStartUp`).
 */
export async function openReplayStore(db: Database): Promise<PostgresReplayStore> {
  await atStartUp(db, 'migrating mrtr_replay', () => migrateReplayTable(db));
  return new PostgresReplayStore(db);
}

/**
 * Build the notes MCP endpoint: schema migrated, demo data seeded on a new
 * database, tools `notes_create`, `notes_list` and the gated `notes_delete`.
 */
export async function createNotesEndpoint(options: NotesServerOptions): Promise<McpEndpoint> {
  return (await assemble(options)).endpoint;
}

/** The example servers' rate limit: 300 tool calls per principal per minute. */
export const DEFAULT_RATE_LIMIT = { limit: 300, windowMs: 60_000 };

/** Most rows of `mrtr_audit` an in-memory database keeps, whatever their age. */
export const MEMORY_AUDIT_MAX_ROWS = 100_000;

/** Who the notes server is, on every entry point. */
export const NOTES_SERVER_INFO = { name: 'mrtr-notes-server', version: '0.1.0' };
/** What it tells clients about itself. */
export const NOTES_INSTRUCTIONS =
  'Notes in shared workspaces. notes_delete asks a person to choose and confirm the note before anything is deleted.';

/**
 * What every entry point of the notes server shares: the database migrated
 * (and seeded when new), the gate on the ledger replay store in that
 * database (behind `options.store` when given), and the sweep of the ledger.
 * A migration that PostgreSQL stalls or drops is told on stderr and run again
 * (`atStartUp` of `@mrtr/example-kit`), not a failed start.
 */
export async function prepareNotes(
  options: NotesServerOptions,
): Promise<{ gate: ConfirmationGate<Queryable>; sweep: () => Promise<number>; sweeps: Sweep[] }> {
  const members = [...new Set(options.tokens.values())];
  await atStartUp(options.db, 'migrating the notes tables', () => migrate(options.db, members));
  const ledger = await openReplayStore(options.db);
  const store: ReplayStore<Queryable> = options.store
    ? new LedgerReplayStore(options.store, ledger)
    : ledger;
  const sweeps: Sweep[] = [{ table: ledger.table, run: () => ledger.sweep() }];
  const gate = new ConfirmationGate<Queryable>({
    sealer: new TicketSealer({
      keys: ticketKeys(options),
      ...(options.now ? { now: options.now } : {}),
    }),
    store,
    ...(options.approvals ? { approvals: options.approvals } : {}),
    audit: await auditSinks(options, sweeps),
  });
  return { gate, sweep: () => ledger.sweep(), sweeps };
}

/** The endpoint, and the tables that grow with it: the replay ledger's and the audit table. */
async function assemble(
  options: NotesServerOptions,
): Promise<{ endpoint: McpEndpoint; sweeps: Sweep[] }> {
  const { gate, sweeps } = await prepareNotes(options);
  const endpoint = createMcpEndpoint({
    serverInfo: NOTES_SERVER_INFO,
    instructions: NOTES_INSTRUCTIONS,
    tools: notesTools(options.db, gate),
    authenticate: bearerAuthenticator(options.tokens),
    // server/tools: servers MUST rate limit tool invocations.
    ...(options.rateLimit === false ? {} : { rateLimit: options.rateLimit ?? DEFAULT_RATE_LIMIT }),
  });
  return { endpoint, sweeps };
}

/**
 * Start the notes server on `host:port` (port 0 picks a free one) at path
 * `/mcp`, with its approval page under `/approve/` (unless `approvalPage:
 * false`) for clients that can only open a URL. Every `sweepIntervalMs`
 * milliseconds (default 60 000), and once at start, until `close()`: expired
 * rows of the replay ledger and of the approvals, and with `auditTable` rows
 * of `mrtr_audit` past `auditRetentionMs`, are deleted (on PGlite the tables
 * are vacuumed after, so an in-memory server stays bounded).
 */
export async function startNotesServer(
  options: NotesServerOptions & {
    host?: string;
    port?: number;
    publicOrigin?: string;
    approvalPage?: boolean;
    /**
     * Principal → password of the approval page's sign-in (`pageUsers` of
     * `readServerEnv`: `MRTR_PAGE_USERS`): passwords the MCP clients do not
     * hold. Default: each principal's bearer token of `tokens`, so whoever
     * holds a client's token can approve on the page (a demonstration only).
     */
    pageUsers?: ReadonlyMap<string, string>;
    sweepIntervalMs?: number;
  },
): Promise<RunningServer> {
  let sweeper: ReturnType<typeof startSweeper> | undefined;
  return listenApp(
    async (origin) => {
      const approvals =
        options.approvalPage === false || options.approvals
          ? undefined
          : await exampleApprovals(options.db, origin, options.tokens, 'Notes', {
              ...(options.pageUsers ? { pageUsers: options.pageUsers } : {}),
            });
      const { endpoint, sweeps } = await assemble(
        approvals ? { ...options, approvals: approvals.channel } : options,
      );
      if (approvals) sweeps.push({ table: 'mrtr_approvals', run: () => approvals.sweep() });
      sweeper = startSweeper(options.db, sweeps, options.sweepIntervalMs ?? 60_000);
      return approvals ? { endpoint, page: approvals.page } : { endpoint };
    },
    {
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 0,
      ...(options.publicOrigin ? { publicOrigin: options.publicOrigin } : {}),
      onClose: () => sweeper?.stop(),
    },
  );
}

/**
 * The sinks of `options`: those given, then table `mrtr_audit` of `db` when
 * `auditTable` is set (its sweep added to `sweeps`).
 */
async function auditSinks(
  options: NotesServerOptions,
  sweeps: Sweep[],
): Promise<AuditSink<Queryable>[]> {
  const sinks = [options.audit ?? []].flat() as AuditSink<Queryable>[];
  if (options.auditTable) {
    await atStartUp(options.db, 'migrating mrtr_audit', () => migrateAuditTable(options.db));
    const table = new PostgresAuditSink(options.db, {
      ...(options.auditRetentionMs !== undefined ? { retentionMs: options.auditRetentionMs } : {}),
      ...(options.db.inMemory ? { maxRows: MEMORY_AUDIT_MAX_ROWS } : {}),
    });
    sinks.push(table);
    sweeps.push({ table: DEFAULT_AUDIT_TABLE, run: () => table.sweep() });
  }
  return sinks;
}
