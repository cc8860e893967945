// The strongest level on Express 5: a person approves each deletion on this server's own page with
// a passkey (`presence`), and the server signs a receipt an executor can check (JWKS published).
// npm install @mrtr/gate @mrtr/express @mrtr/server @mrtr/replay-postgres @mrtr/sql @mrtr/ticket @mrtr/wire @mrtr/approval-page @mrtr/receipt express pg zod
// Until the first release the line above stops with E404; install the packed tarballs instead
// (README.md, "Install from tarballs"): npm install /tmp/mrtr/mrtr-{gate,node,express,server,replay-postgres,replay,sql,ticket,wire,digest,approval-page,receipt}-[0-9]*.tgz express pg zod
// npm install -D @types/express @types/pg tsx
// npm pkg set type=module   # an ES module: the file awaits at top level
// openssl genpkey -algorithm ed25519 -out receipt-key.pem   # the receipt signing key (keep it secret)
// export TOKEN=$(openssl rand -hex 16); echo "token: $TOKEN"  # your MCP client sends it
// export ALICE_PAGE_PASSWORD=$(openssl rand -base64 24)        # alice signs in to the page with it
// export PUBLIC_ORIGIN=https://records.example.com  # optional: where people reach this server
//                                                    # (default http://localhost:$PORT)
// MRTR_SECRET=$(openssl rand -base64 32) RECEIPT_KEY_PEM="$(cat receipt-key.pem)" \
//   DATABASE_URL=postgres://localhost/app npx tsx strongest-express.ts
// Then, from a client that shows URL-mode questions, e.g. this repository's `mrtr` (call the
// page's host, localhost, not 127.0.0.1: a page on another host than the server is a warning):
// MRTR_TOKEN=$TOKEN npx -y pnpm@12.4.2 mrtr call http://localhost:3000/mcp delete_record --arg id=rec-1
import { createHash, timingSafeEqual } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import {
  createApprovalChannel,
  createApprovalPage,
  migrateApprovalTables,
  PostgresApprovalStore,
} from '@mrtr/approval-page';
import { createHttpServer, mcpErrorHandler, mcpHandler } from '@mrtr/express';
import { ConfirmationGate, confirm, withoutAsking } from '@mrtr/gate';
import { ReceiptSigner, receiptIssuer, verifyAndRun } from '@mrtr/receipt';
import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
import { createMcpEndpoint } from '@mrtr/server';
import { pgPoolDriver, pgPoolTimeouts } from '@mrtr/sql';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import pg from 'pg';
import { z } from 'zod';

const { MRTR_SECRET, TOKEN, ALICE_PAGE_PASSWORD, RECEIPT_KEY_PEM, DATABASE_URL } = process.env;
const PORT = process.env.PORT ?? '3000';
// Browsers refuse passkeys on an IP address: the page's origin names localhost (or your domain).
// Read as a URL: the receipts' issuer is exactly this origin, whatever path or slash was set.
const PUBLIC_ORIGIN = new URL(process.env.PUBLIC_ORIGIN ?? `http://localhost:${PORT}`).origin;
if (!MRTR_SECRET || !TOKEN || !ALICE_PAGE_PASSWORD || !RECEIPT_KEY_PEM || !DATABASE_URL)
  throw new Error(
    'Set MRTR_SECRET, TOKEN, ALICE_PAGE_PASSWORD, RECEIPT_KEY_PEM and DATABASE_URL (see the top)',
  );
const db = pgPoolDriver(new pg.Pool({ connectionString: DATABASE_URL, ...pgPoolTimeouts() }));
await migrateReplayTable(db);
await migrateApprovalTables(db); // approvals and passkeys, in the same database
await db.transaction(async (tx) => {
  // Under a lock: instances starting together on a new database would race to create the table.
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('records-migrate'))");
  await tx.query(`CREATE TABLE IF NOT EXISTS records (id text PRIMARY KEY);
    INSERT INTO records VALUES ('rec-1'), ('rec-2') ON CONFLICT DO NOTHING`); // demo rows: deleted ones come back at each start
});

const approvalStore = new PostgresApprovalStore(db);
setInterval(() => approvalStore.sweep().catch(() => {}), 60_000).unref(); // expired approvals go
const location = { origin: PUBLIC_ORIGIN, basePath: '/approve' };
const page = createApprovalPage({
  store: approvalStore,
  ...location,
  // A password of the person's own, never the bearer token an MCP client holds: see the page's README.
  signIn: { users: { alice: ALICE_PAGE_PASSWORD } },
  serviceName: 'Records',
});
// The public key is derived from the private one; verifiers take it from /.well-known/jwks.json.
const signer = await ReceiptSigner.create({
  keys: [{ kid: 'k1', privateKey: RECEIPT_KEY_PEM }],
  issuer: PUBLIC_ORIGIN,
});

const replay = new PostgresReplayStore(db);
// Rows of tickets past their expiry are no longer needed: delete them every minute.
setInterval(() => replay.sweep().catch(() => {}), 60_000).unref();
const gate = new ConfirmationGate({
  sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: MRTR_SECRET }] }),
  store: replay,
  approvals: createApprovalChannel({ store: approvalStore, ...location }),
  receipts: receiptIssuer(signer),
});
const deleteRecord = gate.tool({
  name: 'delete_record',
  description: 'Delete a record; a person approves it on our page with a passkey.',
  args: z.object({ id: z.string().regex(/^[\w-]{1,64}$/) }),
  form: { confirm: confirm({ title: 'Yes, delete it permanently' }) },
  async ask({ args, tx }) {
    const sql = `SELECT id FROM records WHERE id = $1${tx ? ' FOR UPDATE' : ''}`;
    const { rows } = await (tx ?? db).query(sql, [args.id]);
    if (rows.length === 0) return withoutAsking(textResult(`No record ${args.id}.`));
    return { message: `Delete record ${args.id}? This cannot be undone.`, view: args.id };
  },
  level: 'presence', // the page, signed in, and a passkey: the client's "yes" is not enough
  async perform({ args, principal, view, tx, receipt }) {
    // The deletion runs on the receipt, as an executor would run it: verified, and claimed once in
    // this transaction. A receipt is a bearer token until claimed; used up here, it is refused
    // (already_used) by any executor that claims receipts in this database's replay table.
    await verifyAndRun(
      receipt as string, // the gate signs one for every approval it lets run
      {
        keys: signer.jwks(),
        issuer: PUBLIC_ORIGIN,
        operation: 'tools/call:delete_record',
        arguments: args,
        principal,
        minLevel: 'passkey',
        store: replay.inTransaction(tx),
      },
      async (_verified, q) => {
        await q.query('DELETE FROM records WHERE id = $1', [view]);
        return view;
      },
    );
    const structured = { deleted: view, receipt };
    // The JSON in the text block too, for clients that read only `content`.
    return textResult(JSON.stringify(structured), { structuredContent: structured });
  },
});
const endpoint = createMcpEndpoint({
  serverInfo: { name: 'records', version: '1.0.0' },
  tools: [deleteRecord],
  // The MCP endpoint answers on the page's host too (its default: localhost, 127.0.0.1, [::1]).
  allowedHosts: [new URL(PUBLIC_ORIGIN).host, 'localhost', '127.0.0.1', '[::1]'],
});

// Your authentication: here one bearer token for alice, compared in constant time.
const digest = (text: string) => createHash('sha256').update(text).digest();
const expected = digest(`Bearer ${TOKEN}`);
const bearerAuth: RequestHandler = (req, res, next) => {
  // headersDistinct: every Authorization field (two never match); req.headers keeps only the first.
  if (timingSafeEqual(digest(req.headersDistinct.authorization?.join(', ') ?? ''), expected))
    res.locals.principal = { id: 'alice' };
  next();
};
const app = express();
// No body parser in front: the endpoint reads the body and judges it as on @mrtr/node.
app.all(
  '/mcp',
  bearerAuth,
  mcpHandler(endpoint, { principal: (_req, res) => res.locals.principal }),
);
app.use('/mcp', mcpErrorHandler());
app.all('/approve/{*rest}', mcpHandler(page)); // sign-in, approvals, /approve/passkeys
app.get('/.well-known/jwks.json', (_req, res) => {
  res.set('cache-control', 'max-age=300').json(signer.jwks()); // public keys only (RFC 7517)
});
// Express's own error page shows a stack trace unless NODE_ENV=production (a malformed URL on
// /approve/ reaches it): answer with the status alone.
const plainErrors: ErrorRequestHandler = (error, _req, res, _next) => {
  const status = Number((error as { status?: unknown }).status) || 500;
  res
    .status(status)
    .type('text/plain')
    .send(STATUS_CODES[status] ?? 'Error');
};
app.use(plainErrors);
createHttpServer(app).listen(Number(PORT), '127.0.0.1', () =>
  console.log(
    `MCP endpoint: ${PUBLIC_ORIGIN}/mcp; alice registers her passkey at ${PUBLIC_ORIGIN}/approve/passkeys`,
  ),
);
