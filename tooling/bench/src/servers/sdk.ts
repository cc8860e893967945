/**
 * The flow benchmark's baseline: the same gated tool on the official SDK,
 * `@modelcontextprotocol/server` 2.4.0 served by `createMcpHandler` in its
 * 2026-07-28 mode (`legacy: 'reject'`, a fresh `McpServer` per request as the
 * entry is designed) and mounted with `@modelcontextprotocol/node`'s
 * `toNodeHandler`. `requestState` comes from the SDK's
 * `createRequestStateCodec` (HMAC-SHA256, bound to method and principal) and
 * is verified by the server's `requestState.verify` hook; the payload carries
 * the arguments, the candidate ids and a nonce, which the handler checks on
 * the retry against an in-memory `Set` of used nonces.
 *
 * The same checks as `ConfirmationGate`, written the way the SDK's own MRTR
 * example writes them. Run as a child process by `../flow.ts`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  type AuthInfo,
  acceptedContent,
  type CallToolResult,
  createMcpHandler,
  createRequestStateCodec,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import {
  candidatesOf,
  deleteRecord,
  formSchema,
  KEY,
  PRINCIPAL,
  question,
  SECRET,
  seedRecords,
  serveChild,
  TOKEN,
  TOOL,
} from '../flow/common.js';

/** What round 1 signs into `requestState`. */
interface State {
  ws: string;
  cand: string[];
  n: string;
}

const records = seedRecords();
const used = new Set<string>();
const codec = createRequestStateCodec<State>({
  key: SECRET,
  ttlSeconds: 300,
  bind: (ctx) => `${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ''}`,
});
const answerSchema = z.object({ record_id: z.string(), confirm: z.boolean() });
const text = (t: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: t }],
  isError,
});

async function ask(workspace: string, ctx: ServerContext, notice = '') {
  const candidates = candidatesOf(records, workspace);
  if (candidates.length === 0) return text(`Workspace "${workspace}" has no records.`);
  const state: State = {
    ws: workspace,
    cand: candidates,
    n: randomBytes(16).toString('base64url'),
  };
  return inputRequired({
    inputRequests: {
      [KEY]: inputRequired.elicit({
        message: `${notice}${question(workspace, candidates.length)}`,
        requestedSchema: formSchema(candidates),
      }),
    },
    requestState: await codec.mint(state, ctx),
  });
}

async function deleteRecordTool(
  { workspace }: { workspace: string },
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  // Verified by the seam's requestState.verify hook (MAC, expiry, method + principal binding).
  const state = ctx.mcpReq.requestState<State>();
  if (state === undefined) return ask(workspace, ctx);
  // The codec does not bind the arguments; the payload carries them.
  if (state.ws !== workspace)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'requestState was issued for other arguments',
    );
  // Ask again with the same payload (same nonce, so still single-use), re-minted.
  const again = async (notice: string) =>
    inputRequired({
      inputRequests: {
        [KEY]: inputRequired.elicit({
          message: `${notice} ${question(workspace, state.cand.length)}`,
          requestedSchema: formSchema(state.cand),
        }),
      },
      requestState: await codec.mint(state, ctx),
    });
  const answer = inputResponse(ctx.mcpReq.inputResponses, KEY);
  if (answer.kind !== 'elicit') return again('No valid answer was received.');
  if (answer.action === 'cancel') return text('Cancelled. Nothing was changed.');
  const refuse = () => {
    if (used.has(state.n)) return text('This confirmation was already used.', true);
    used.add(state.n);
    return text('Declined. Nothing was changed.');
  };
  if (answer.action === 'decline') return refuse();
  const content = acceptedContent(ctx.mcpReq.inputResponses, KEY, answerSchema);
  if (!content || !state.cand.includes(content.record_id))
    return again('record_id must be one of the offered choices.');
  if (!content.confirm) return refuse();
  if (used.has(state.n)) return text('This confirmation was already used.', true);
  used.add(state.n);
  const id = content.record_id;
  if (records.get(id)?.workspace !== workspace) {
    used.delete(state.n);
    return ask(workspace, ctx, 'The record changed since you were asked. ');
  }
  deleteRecord(records, id);
  return text(`Deleted ${id} from ${workspace}.`);
}

function factory() {
  const server = new McpServer(
    { name: 'bench-sdk', version: '0.0.0' },
    { capabilities: { tools: {} }, requestState: { verify: codec.verify } },
  );
  server.registerTool(
    TOOL,
    {
      description: 'Delete one record of a workspace, after a person confirms which.',
      inputSchema: z.object({ workspace: z.string() }),
    },
    deleteRecordTool,
  );
  return server;
}

const handler = toNodeHandler(createMcpHandler(factory, { legacy: 'reject' }));
const bearer = `Bearer ${TOKEN}`;
const auth: AuthInfo = { token: TOKEN, clientId: PRINCIPAL, scopes: [], expiresAt: 4_102_444_800 };

await serveChild((req: IncomingMessage, res: ServerResponse) => {
  if (req.headers.authorization !== bearer) {
    res.writeHead(401).end();
    return;
  }
  (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
  void handler(req, res);
});
