// npm install @mrtr/gate @mrtr/hono @mrtr/node @mrtr/server @mrtr/replay-postgres @mrtr/sql @mrtr/ticket @mrtr/wire hono @hono/node-server pg zod
// Until the first release the line above stops with E404; install the packed tarballs instead
// (README.md, "Install from tarballs"): npm install /tmp/mrtr/mrtr-{gate,node,hono,server,replay-postgres,replay,sql,ticket,wire,digest}-[0-9]*.tgz hono @hono/node-server pg zod
// npm install -D @types/pg tsx
// npm pkg set type=module   # an ES module: the file awaits at top level
// export TOKEN=$(openssl rand -hex 16); echo "token: $TOKEN" # your client sends it
// MRTR_SECRET=$(openssl rand -base64 32) DATABASE_URL=postgres://localhost/app npx tsx quickstart-hono.ts
import { createHash, timingSafeEqual } from 'node:crypto';
import { getRequestListener } from '@hono/node-server';
import { ConfirmationGate, confirm, withoutAsking } from '@mrtr/gate';
import { mcpHandler, pathAsSent, requestErrorHandler } from '@mrtr/hono';
import { createHttpServer } from '@mrtr/node';
import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
import { createMcpEndpoint } from '@mrtr/server';
import { pgPoolDriver, pgPoolTimeouts } from '@mrtr/sql';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { Hono, type MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
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
const deleteRecord = gate.tool({
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
const endpoint = createMcpEndpoint({
  serverInfo: { name: 'records', version: '1.0.0' },
  tools: [deleteRecord],
});

// Your authentication middleware: here one bearer token for alice (use your own verifier).
// Constant time: `===` returns at the first differing character, so timing would leak the token.
const digest = (text: string) => createHash('sha256').update(text).digest();
const sameToken = (given: string | undefined, expected: string) =>
  timingSafeEqual(digest(given ?? ''), digest(expected));
type Env = { Variables: { principal: { id: string } | undefined } };
const bearerAuth: MiddlewareHandler<Env> = async (c, next) => {
  const ok = sameToken(c.req.header('authorization'), `Bearer ${TOKEN}`);
  c.set('principal', ok ? { id: 'alice' } : undefined);
  await next();
};
// Routes match the path as sent: /%6dcp and /a/../mcp are not /mcp (see the README of @mrtr/hono).
const app = new Hono<Env>({ getPath: pathAsSent });
app.use('/mcp', bearerAuth);
app.all('/mcp', mcpHandler<Env>(endpoint, { principal: (c) => c.get('principal') }));
// A middleware that throws (an auth backend down) gets a JSON-RPC body, not Hono's text/plain 500.
app.onError((error) => {
  const status = error instanceof HTTPException ? error.status : 500;
  if (status >= 500) console.error(error);
  const [code, message] = status >= 500 ? [-32603, 'Internal error'] : [-32600, 'Invalid Request'];
  return Response.json({ jsonrpc: '2.0', id: null, error: { code, message } }, { status });
});
// What Node, or @hono/node-server before the app, would refuse with an empty body gets a JSON-RPC one.
const listener = getRequestListener(app.fetch, { errorHandler: requestErrorHandler() });
createHttpServer(listener).listen(Number(PORT), '127.0.0.1', () =>
  console.log(`MCP endpoint: http://127.0.0.1:${PORT}/mcp`),
);
