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
import { MemoryReplayStore } from '@mrtr/replay';
import { registerGatedTool, serveBothEras } from '@mrtr/sdk';
import { TicketSealer } from '@mrtr/ticket';
import { shownText, textResult } from '@mrtr/wire';
import { z } from 'zod';

const { MRTR_SECRET, TOKEN, PORT = '3000' } = process.env;
if (!MRTR_SECRET || !TOKEN) throw new Error('Set MRTR_SECRET (openssl rand -base64 32) and TOKEN');
const records = new Set(['rec-1', 'rec-2']);
const gate = new ConfirmationGate({
  sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: MRTR_SECRET }] }), // throws if < 32 bytes
  store: new MemoryReplayStore(), // one process; @mrtr/replay-postgres or -redis for several
});

function buildServer(): McpServer {
  const server = new McpServer({ name: 'records', version: '1.0.0' });
  registerGatedTool(server, gate, {
    name: 'delete_record',
    description: 'Delete a record; a person confirms first.',
    args: z.object({ id: z.string().regex(/^[\w-]{1,64}$/) }), // an id: nothing a database can't keep
    form: { confirm: confirm({ title: 'Yes, delete it permanently' }) },
    async ask({ args }) {
      if (!records.has(args.id)) return withoutAsking(textResult('No such record.'));
      return { message: `Delete record ${args.id}? This cannot be undone.`, view: args.id };
    },
    perform: async ({ view }) => textResult(`Deleted ${view}: ${records.delete(view)}.`),
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
  // headersDistinct: every Authorization field (two never match); req.headers keeps only the first.
  if (!sameToken(req.headersDistinct.authorization?.join(', '), `Bearer ${TOKEN}`))
    return refuse(res, 401, 'Authentication required', { 'www-authenticate': 'Bearer' });
  req.auth = { token: TOKEN, clientId: 'alice', scopes: [] }; // the principal tickets are bound to
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
