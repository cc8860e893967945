import { migrateAuditTable, PostgresAuditSink } from '@mrtr/audit';
import {
  bearerAuthenticator,
  exampleApprovals,
  listenApp,
  type RunningServer,
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

/** The endpoint, and the sweep of the default replay store when it is the one in use. */
async function assemble(
  options: NotesServerOptions,
): Promise<{ endpoint: McpEndpoint; sweep: () => Promise<number> }> {
  await migrate(options.db, [...new Set(options.tokens.values())]);
  const ledger = await openReplayStore(options.db);
  const store: ReplayStore<Queryable> = options.store
    ? new LedgerReplayStore(options.store, ledger)
    : ledger;
  const sweep = () => ledger.sweep();
  const gate = new ConfirmationGate<Queryable>({
    sealer: new TicketSealer({
      keys: [{ kid: 'k1', secret: options.secret }],
      ...(options.now ? { now: options.now } : {}),
    }),
    store,
    ...(options.approvals ? { approvals: options.approvals } : {}),
    audit: await auditSinks(options),
  });
  const endpoint = createMcpEndpoint({
    serverInfo: { name: 'mrtr-notes-server', version: '0.1.0' },
    instructions:
      'Notes in shared workspaces. notes_delete asks a person to choose and confirm the note before anything is deleted.',
    tools: notesTools(options.db, gate),
    authenticate: bearerAuthenticator(options.tokens),
  });
  return { endpoint, sweep };
}

/**
 * Start the notes server on `host:port` (port 0 picks a free one) at path
 * `/mcp`, with its approval page under `/approve/` (unless `approvalPage:
 * false`) for clients that can only open a URL. Expired `mrtr_replay` rows
 * and approvals are swept every `sweepIntervalMs` milliseconds (default
 * 60 000) until `close()`.
 */
export async function startNotesServer(
  options: NotesServerOptions & {
    host?: string;
    port?: number;
    publicOrigin?: string;
    approvalPage?: boolean;
    sweepIntervalMs?: number;
  },
): Promise<RunningServer> {
  let sweeper: NodeJS.Timeout | undefined;
  return listenApp(
    async (origin) => {
      const approvals =
        options.approvalPage === false || options.approvals
          ? undefined
          : await exampleApprovals(options.db, origin, options.tokens, 'Notes');
      const { endpoint, sweep } = await assemble(
        approvals ? { ...options, approvals: approvals.channel } : options,
      );
      sweeper = setInterval(() => {
        Promise.all([sweep(), approvals?.sweep()]).catch((error: unknown) =>
          console.warn(`sweep failed: ${String(error)}`),
        );
      }, options.sweepIntervalMs ?? 60_000);
      sweeper.unref();
      return approvals ? { endpoint, page: approvals.page } : { endpoint };
    },
    {
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 0,
      ...(options.publicOrigin ? { publicOrigin: options.publicOrigin } : {}),
      onClose: () => clearInterval(sweeper),
    },
  );
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
