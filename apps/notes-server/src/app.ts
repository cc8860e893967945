import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AuditSink, ConfirmationGate } from '@mrtr/gate';
import { toNodeHandler } from '@mrtr/node';
import { MemoryReplayStore, type ReplayStore } from '@mrtr/replay';
import { createMcpEndpoint, type McpEndpoint, type Principal } from '@mrtr/server';
import { TicketSealer } from '@mrtr/ticket';
import type { Database } from './db.js';
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
  /** Replay store shared by every instance (default: a new in-memory store). */
  store?: ReplayStore<void>;
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
 * Build the notes MCP endpoint: schema migrated, demo data seeded on a new
 * database, tools `notes_create`, `notes_list` and the gated `notes_delete`.
 */
export async function createNotesEndpoint(options: NotesServerOptions): Promise<McpEndpoint> {
  await migrate(options.db, [...new Set(options.tokens.values())]);
  const gate = new ConfirmationGate({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: options.secret }] }),
    store: options.store ?? new MemoryReplayStore(),
    ...(options.audit ? { audit: options.audit } : {}),
  });
  return createMcpEndpoint({
    serverInfo: { name: 'mrtr-notes-server', version: '0.1.0' },
    instructions:
      'Notes in shared workspaces. notes_delete asks a person to choose and confirm the note before anything is deleted.',
    tools: notesTools(options.db, gate),
    authenticate: bearerAuthenticator(options.tokens),
  });
}

/** A running notes server. */
export interface RunningServer {
  server: Server;
  /** The MCP endpoint URL, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  close(): Promise<void>;
}

/** Start the notes server on `host:port` (port 0 picks a free one) at path `/mcp`. */
export async function startNotesServer(
  options: NotesServerOptions & { host?: string; port?: number },
): Promise<RunningServer> {
  const endpoint = await createNotesEndpoint(options);
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
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
