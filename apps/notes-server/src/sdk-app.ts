/**
 * The notes server on the official MCP SDK (`@modelcontextprotocol/server`
 * 2.4) through `@mrtr/sdk`: the same database, the same tools, the same
 * `notes_delete` declaration (`delete-note.ts`), served to 2026-07-28
 * clients per request and to 2025-era clients on sessions.
 */

import {
  type CallToolResult,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  McpServer,
  type ServerContext,
  validateHostHeader,
  validateOriginHeader,
} from '@modelcontextprotocol/server';
import { bearerAuthenticator, listen, type RunningServer } from '@mrtr/example-kit';
import {
  type BothErasHandler,
  principalFromAuthInfo,
  registerGatedTool,
  serveBothEras,
} from '@mrtr/sdk';
import type { McpEndpoint } from '@mrtr/server';
import type { CallToolResult as GateResult } from '@mrtr/wire';
import {
  NOTES_INSTRUCTIONS,
  NOTES_SERVER_INFO,
  type NotesServerOptions,
  prepareNotes,
} from './app.js';
import { deleteNoteDeclaration } from './delete-note.js';
import { CreateArgs, createFor, ListArgs, listFor, NOTES_TOOLS } from './tools.js';

/** A result of the shared tool code in the SDK's shape (the SDK stamps `resultType` itself). */
function sdkResult({ resultType: _complete, ...result }: GateResult): CallToolResult {
  return result;
}

/** The caller, from the `authInfo` the endpoint handed the SDK. */
function principalOf(ctx: ServerContext): string {
  const principal = principalFromAuthInfo(ctx);
  if (!principal) throw new Error('Authentication required');
  return principal;
}

/**
 * The notes tools on a new `McpServer`, built per request (2026-07-28) or
 * per session (2025-era) by {@link createNotesSdkHandler}.
 */
export async function createNotesSdkHandler(
  options: NotesServerOptions,
): Promise<{ handler: BothErasHandler; sweep: () => Promise<number> }> {
  const { gate, sweep } = await prepareNotes(options);
  const { db } = options;
  const deletion = deleteNoteDeclaration(db, { approvals: gate.approvals !== undefined });
  const handler = serveBothEras(() => {
    const server = new McpServer(NOTES_SERVER_INFO, { instructions: NOTES_INSTRUCTIONS });
    const { name: create, ...createInfo } = NOTES_TOOLS.create;
    server.registerTool(create, { ...createInfo, inputSchema: CreateArgs }, async (args, ctx) =>
      sdkResult(await createFor(db, principalOf(ctx), args)),
    );
    const { name: list, ...listInfo } = NOTES_TOOLS.list;
    const readOnly = { annotations: { readOnlyHint: true } };
    server.registerTool(
      list,
      { ...listInfo, ...readOnly, inputSchema: ListArgs },
      async (args, ctx) => sdkResult(await listFor(db, principalOf(ctx), args)),
    );
    registerGatedTool(server, gate, deletion);
    return server;
  });
  return { handler, sweep };
}

/**
 * The SDK-served notes server as a web-standard endpoint that authenticates
 * bearer tokens itself (`options.tokens`) and hands the principal to the SDK
 * as `authInfo` (`clientId` and `extra.sub`): what `startNotesSdkServer`
 * listens with, and what the test matrix mounts. Like `@mrtr/server`'s
 * endpoint by default, it serves loopback `Host`s and `Origin`s only (the
 * SDK's validation helpers, 403 otherwise): `serveBothEras` checks neither,
 * and a local server without them is open to DNS rebinding.
 */
export async function createNotesSdkEndpoint(
  options: NotesServerOptions,
): Promise<{ endpoint: McpEndpoint; sweep: () => Promise<number>; close(): Promise<void> }> {
  const { handler, sweep } = await createNotesSdkHandler(options);
  const authenticate = bearerAuthenticator(options.tokens);
  const [hosts, origins] = [localhostAllowedHostnames(), localhostAllowedOrigins()];
  const endpoint: McpEndpoint = async (request) => {
    // JSON-RPC errors to a request whose id is unknown omit `id` (2026-07-28 has no `"id": null`).
    for (const check of [
      validateHostHeader(request.headers.get('host'), hosts),
      validateOriginHeader(request.headers.get('origin'), origins),
    ])
      if (!check.ok)
        return Response.json(
          { jsonrpc: '2.0', error: { code: -32600, message: check.message } },
          { status: 403 },
        );
    const principal = authenticate(request);
    if (!principal) {
      const error = { code: -32600, message: 'Authentication required' };
      return Response.json(
        { jsonrpc: '2.0', error },
        { status: 401, headers: { 'www-authenticate': 'Bearer' } },
      );
    }
    const token = (request.headers.get('authorization') ?? '').replace(/^Bearer\s+/i, '');
    const authInfo = { token, clientId: principal.id, scopes: [], extra: { sub: principal.id } };
    return handler.fetch(request, { authInfo });
  };
  return { endpoint, sweep, close: () => handler.close() };
}

/**
 * Start the SDK-served notes server on `host:port` (port 0 picks a free one)
 * at path `/mcp`, for 2026-07-28 and 2025-era clients. Expired `mrtr_replay`
 * rows are swept every `sweepIntervalMs` milliseconds (default 60 000).
 */
export async function startNotesSdkServer(
  options: NotesServerOptions & { host?: string; port?: number; sweepIntervalMs?: number },
): Promise<RunningServer> {
  const { endpoint, sweep, close } = await createNotesSdkEndpoint(options);
  const sweeper = setInterval(() => {
    sweep().catch((error: unknown) => console.warn(`replay sweep failed: ${String(error)}`));
  }, options.sweepIntervalMs ?? 60_000);
  sweeper.unref();
  return listen(endpoint, {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    onClose: async () => {
      clearInterval(sweeper);
      await close();
    },
  });
}
