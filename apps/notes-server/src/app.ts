import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AuditSink, ConfirmationGate } from '@mrtr/gate';
import { toNodeHandler } from '@mrtr/node';
import type { ReplayStore } from '@mrtr/replay';
import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
import { createMcpEndpoint, type McpEndpoint, type Principal } from '@mrtr/server';
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
  /** Audit sink (optional). */
  audit?: AuditSink;
}

/**
 * Parse `MRTR_TOKENS` (`alice:<token>,bob:<token>`) into token → principal.
 * @throws on an entry without a principal or a token, or a token used twice.
 */
export function parseTokens(value: string): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const entry of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = entry.indexOf(':');
    const principal = entry.slice(0, at).trim();
    const token = entry.slice(at + 1).trim();
    if (at <= 0 || !principal || !token)
      throw new Error(
        `MRTR_TOKENS entry must be principal:token, got "${entry.replace(/:.*/, ':…')}"`,
      );
    if (tokens.has(token)) throw new Error('MRTR_TOKENS uses one token twice');
    tokens.set(token, principal);
  }
  return tokens;
}

const sha = (s: string) => createHash('sha256').update(s).digest();

/** A bearer-token authenticator that compares digests in constant time. */
export function bearerAuthenticator(tokens: Map<string, string>) {
  const table = [...tokens].map(([token, id]) => ({ digest: sha(token), id }));
  return (request: Request): Principal | undefined => {
    const m = /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '');
    if (!m) return undefined;
    const presented = sha(m[1] as string);
    let found: string | undefined;
    for (const { digest, id } of table) if (timingSafeEqual(digest, presented)) found = id;
    return found ? { id: found } : undefined;
  };
}

/** A random 32-byte secret, for a server started without `MRTR_SECRET`. */
export function randomSecret(): Uint8Array {
  return randomBytes(32);
}

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
): Promise<{ endpoint: McpEndpoint; sweep?: () => Promise<number> }> {
  await migrate(options.db, [...new Set(options.tokens.values())]);
  let store: ReplayStore<Queryable | undefined>;
  let sweep: (() => Promise<number>) | undefined;
  if (options.store) {
    store = options.store;
  } else {
    const own = await openReplayStore(options.db);
    store = own;
    sweep = () => own.sweep();
  }
  const gate = new ConfirmationGate<Queryable | undefined>({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: options.secret }] }),
    store,
    ...(options.audit ? { audit: options.audit } : {}),
  });
  const endpoint = createMcpEndpoint({
    serverInfo: { name: 'mrtr-notes-server', version: '0.1.0' },
    instructions:
      'Notes in shared workspaces. notes_delete asks a person to choose and confirm the note before anything is deleted.',
    tools: notesTools(options.db, gate),
    authenticate: bearerAuthenticator(options.tokens),
  });
  return sweep ? { endpoint, sweep } : { endpoint };
}

/** A running notes server. */
export interface RunningServer {
  server: Server;
  /** The MCP endpoint URL, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  close(): Promise<void>;
}

/**
 * Start the notes server on `host:port` (port 0 picks a free one) at path
 * `/mcp`. With the default replay store, expired `mrtr_replay` rows are
 * swept every `sweepIntervalMs` milliseconds (default 60 000) until `close()`.
 */
export async function startNotesServer(
  options: NotesServerOptions & { host?: string; port?: number; sweepIntervalMs?: number },
): Promise<RunningServer> {
  const { endpoint, sweep } = await assemble(options);
  let sweeper: NodeJS.Timeout | undefined;
  if (sweep) {
    sweeper = setInterval(() => {
      sweep().catch((error: unknown) => console.warn(`replay sweep failed: ${String(error)}`));
    }, options.sweepIntervalMs ?? 60_000);
    sweeper.unref();
  }
  const server = createServer(toNodeHandler(endpoint, { path: '/mcp' }));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    server,
    url: `http://${shown}:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sweeper);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
