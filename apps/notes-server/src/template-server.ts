// server.ts: the notes server's tools (notes.ts, tools.ts) on node:http and PostgreSQL, outside
// the repository: examples/quickstart-node.ts with its records table and delete_record replaced.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfirmationGate } from '@mrtr/gate';
import { createMcpHttpServer } from '@mrtr/node';
import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
import { createMcpEndpoint } from '@mrtr/server';
import { pgPoolDriver, pgPoolTimeouts } from '@mrtr/sql';
import { TicketSealer } from '@mrtr/ticket';
import pg from 'pg';
import { migrate } from './notes.js';
import { notesTools } from './tools.js';

const { MRTR_SECRET, TOKEN, DATABASE_URL, PORT = '3000' } = process.env;
if (!MRTR_SECRET || !TOKEN || !DATABASE_URL)
  throw new Error('Set MRTR_SECRET (openssl rand -base64 32), TOKEN and DATABASE_URL');
const db = pgPoolDriver(new pg.Pool({ connectionString: DATABASE_URL, ...pgPoolTimeouts() }));
await migrateReplayTable(db); // table mrtr_replay: one row per confirmation used
await migrate(db, ['alice']); // the notes tables; a new database gets notes://team, alice its member

const replay = new PostgresReplayStore(db);
// Rows of tickets past their expiry are no longer needed: delete them every minute.
setInterval(() => replay.sweep().catch(() => {}), 60_000).unref();
const gate = new ConfirmationGate({
  sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: MRTR_SECRET }] }), // ≥ 32 bytes
  store: replay, // the claim commits with the DELETE, on any instance
});

// Constant time: `===` returns at the first differing character, so timing would leak the token.
const digest = (text: string) => createHash('sha256').update(text).digest();
const sameToken = (given: string | null, expected: string) =>
  timingSafeEqual(digest(given ?? ''), digest(expected));
const endpoint = createMcpEndpoint({
  serverInfo: { name: 'notes', version: '1.0.0' },
  tools: notesTools(db, gate), // notes_create, notes_list and the gated notes_delete
  // The principal tickets are bound to; use your own token verifier here.
  authenticate: (r) =>
    sameToken(r.headers.get('authorization'), `Bearer ${TOKEN}`) ? { id: 'alice' } : undefined,
});
createMcpHttpServer(endpoint).listen(Number(PORT), '127.0.0.1', () =>
  console.log(`MCP endpoint: http://127.0.0.1:${PORT}/mcp`),
);
