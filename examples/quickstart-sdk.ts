// npm install @mrtr/sdk @mrtr/gate @mrtr/node @mrtr/replay-postgres @mrtr/sql @mrtr/ticket @mrtr/wire @modelcontextprotocol/server@~2.4.0 @modelcontextprotocol/node@~2.1.2 pg zod
// Until the first release the line above stops with E404; install the packed tarballs instead
// (README.md, "Install from tarballs"): npm install /tmp/mrtr/mrtr-{gate,node,sdk,server,replay-postgres,replay,sql,ticket,wire,digest}-[0-9]*.tgz @modelcontextprotocol/server@~2.4.0 @modelcontextprotocol/node@~2.1.2 pg zod
// npm install -D @types/pg tsx
// npm pkg set type=module   # an ES module: the file awaits at top level
// export TOKEN=$(openssl rand -hex 16); echo "token: $TOKEN" # your client sends it
// MRTR_SECRET=$(openssl rand -base64 32) DATABASE_URL=postgres://localhost/app npx tsx quickstart-sdk.ts
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type NodeIncomingMessageLike, toNodeHandler } from '@modelcontextprotocol/node';
import {
  type AuthInfo,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  McpServer,
  validateHostHeader,
  validateOriginHeader,
} from '@modelcontextprotocol/server';
import { ConfirmationGate, confirm, withoutAsking } from '@mrtr/gate';
import { createHttpServer } from '@mrtr/node';
import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
import { registerGatedTool, serveBothEras } from '@mrtr/sdk';
import { pgPoolDriver, pgPoolTimeouts } from '@mrtr/sql';
import { TicketSealer } from '@mrtr/ticket';
import { shownText, textResult } from '@mrtr/wire';
import pg from 'pg';
import { z } from 'zod';

const { MRTR_SECRET, TOKEN, DATABASE_URL, PORT = '3000' } = process.env;
if (!MRTR_SECRET || !TOKEN || !DATABASE_URL)
  throw new Error('Set MRTR_SECRET (openssl rand -base64 32), TOKEN and DATABASE_URL');
const db = pgPoolDriver(new pg.Pool({ connectionString: DATABASE_URL, ...pgPoolTimeouts() }));
await migrateReplayTable(db); // table mrtr_replay: one row per confirmation used
await db.transaction(async (tx) => {
  // Under a lock: instances starting together on a new database would race to create the table.
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('records-migrate'))");
  await tx.query(`CREATE TABLE IF NOT EXISTS records (id text PRIMARY KEY);
    INSERT INTO records VALUES ('rec-1'), ('rec-2') ON CONFLICT DO NOTHING`); // demo rows: deleted ones come back at each start
});

const replay = new PostgresReplayStore(db);
// Rows of tickets past their expiry are no longer needed: delete them every minute.
setInterval(() => replay.sweep().catch(() => {}), 60_000).unref();
const gate = new ConfirmationGate({
  sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: MRTR_SECRET }] }), // ≥ 32 bytes
  store: replay, // the claim commits with the DELETE, on any instance
});

function buildServer(): McpServer {
  const server = new McpServer({ name: 'records', version: '1.0.0' });
  registerGatedTool(server, gate, {
    name: 'delete_record',
    description: 'Delete a record; a person confirms first.',
    args: z.object({ id: z.string().regex(/^[\w-]{1,64}$/) }), // an id: nothing a database can't keep
    form: { confirm: confirm({ title: 'Yes, delete it permanently' }) },
    async ask({ args, tx }) {
      // Every round, and once more inside the claim's transaction `tx` (lock the row).
      const sql = `SELECT id FROM records WHERE id = $1${tx ? ' FOR UPDATE' : ''}`;
      const { rows } = await (tx ?? db).query(sql, [args.id]);
      if (rows.length === 0) return withoutAsking(textResult(`No record ${args.id}.`));
      return { message: `Delete record ${args.id}? This cannot be undone.`, view: args.id };
    },
    async perform({ view, tx }) {
      await tx.query('DELETE FROM records WHERE id = $1', [view]);
      return textResult(`Deleted ${view}.`);
    },
  });
  return server;
}

const mcp = toNodeHandler(serveBothEras(buildServer)); // 2026-07-28 per request, 2025 on sessions
const [hosts, origins] = [localhostAllowedHostnames(), localhostAllowedOrigins()]; // DNS rebinding
/** Refuse with a JSON-RPC error body, without `id`: the request's is unknown (never `null`). */
const refuse = (res: ServerResponse, status: number, message: string, headers = {}) => {
  const error = { code: -32600, message: shownText(message, 300) }; // the SDK quotes the header raw
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error }));
};
// The body is read here, within 1 MiB, and handed on: the SDK adapter answers its own 413
// with `"id": null`, which 2026-07-28 does not allow.
const MAX_BODY_BYTES = 1024 * 1024;
async function bodyWithin(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  if (Number(req.headers['content-length']) > max) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
// Constant time: `===` returns at the first differing character, so timing would leak the token.
const digest = (text: string) => createHash('sha256').update(text).digest();
const sameToken = (given: string | undefined, expected: string) =>
  timingSafeEqual(digest(given ?? ''), digest(expected));
// createHttpServer: no Host, two or a malformed one, Node's own refusals: JSON-RPC 400s too.
createHttpServer((req: IncomingMessage & { auth?: AuthInfo }, res) => {
  const foreign = [
    validateHostHeader(req.headers.host, hosts),
    validateOriginHeader(req.headers.origin, origins),
  ];
  for (const check of foreign) if (!check.ok) return refuse(res, 403, check.message);
  // A target that names a host (`http://evil.example/mcp`) is not the Host the guard checked.
  if (!req.url?.startsWith('/')) return refuse(res, 400, 'Bad Request: send a path as the target');
  if (req.url.split('?')[0] !== '/mcp')
    return refuse(res, 404, 'Not Found: the MCP endpoint is /mcp');
  // The principal tickets are bound to (`clientId`); use your own token verifier here.
  // headersDistinct: every Authorization field (two never match); req.headers keeps only the first.
  if (!sameToken(req.headersDistinct.authorization?.join(', '), `Bearer ${TOKEN}`))
    return refuse(res, 401, 'Authentication required', { 'www-authenticate': 'Bearer' });
  req.auth = { token: TOKEN, clientId: 'alice', scopes: [] };
  const { method, url, headers, auth } = req;
  void bodyWithin(req, MAX_BODY_BYTES).then(
    (body) => {
      if (!body) return refuse(res, 413, 'Request body too large', { connection: 'close' });
      // The request as read: the adapter takes any object with these fields that yields the body.
      const read: NodeIncomingMessageLike = {
        headers,
        auth,
        url,
        [Symbol.asyncIterator]: async function* () {
          yield body;
        },
      };
      if (method !== undefined) read.method = method;
      return mcp(read, res);
    },
    () => req.destroy(), // the client went away mid-body
  );
}).listen(Number(PORT), '127.0.0.1', () =>
  console.log(`MCP endpoint: http://127.0.0.1:${PORT}/mcp`),
);
