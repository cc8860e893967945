/**
 * Routing of `tools/call` on an `McpServer` with gated tools.
 *
 * Why: `McpServer`'s own `tools/call` handler catches everything a tool
 * callback throws and answers it as an `isError` result (only `-32042`
 * passes), so a gate refusal (`-32021`, `-32602`, `-32603`) could not reach
 * the client as the JSON-RPC error it is. And the server-wide
 * `requestState.verify` hook runs on every round's `requestState` before any
 * tool handler: a codec installed for other tools (the SDK's HMAC
 * `createRequestStateCodec`) rejects the gate's sealed ticket ("mac"), so a
 * gated tool could never complete.
 *
 * How: the router takes over the `tools/call` dispatch of `server.server`.
 * A call of a tool no gate owns goes to `McpServer`'s own handler, exactly as
 * before (behind the SDK's seam, your verify hook included). A call of a
 * gated tool goes to a second handler registered on the same `Server`, so it
 * still runs behind the SDK's seam (request validation, the 2026-07-28
 * capability check of an `input_required`, the 2025-era shim that turns it
 * into `elicitation/create` requests), but with its `requestState` handed to
 * the gate instead of your verify hook: the gate opens its own tickets
 * (XChaCha20-Poly1305, bound to principal, tool and arguments), your hook
 * keeps verifying your other tools' state.
 */
import {
  type CallToolRequest,
  type CallToolResult,
  type InputRequiredResult,
  type JSONRPCRequest,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type RegisteredTool,
  type RequestStateAccessor,
  type Result,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { eraOf } from './request.js';

type StoredHandler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** How the router serves one gated tool. */
export interface GatedRoute {
  /** What `McpServer.registerTool` returned: disabled means the SDK answers the call. */
  readonly registered: RegisteredTool;
  serve(
    request: CallToolRequest,
    ctx: ServerContext,
    call: GatedCall,
  ): Promise<CallToolResult | InputRequiredResult>;
}

/**
 * One gated call, carried in its context (under a symbol, so the SDK's
 * copies of the context keep it). `requestState` is the string received on
 * the wire; on a 2025-era connection, where the SDK re-enters the handler in
 * process after each `elicitation/create`, it is the last ticket the gate
 * minted in this call, which never leaves the server.
 */
export class GatedCall {
  constructor(
    readonly route: GatedRoute,
    public requestState: unknown,
  ) {}
}

const GATED_CALL = Symbol('@mrtr/sdk gated call');
const NO_REQUEST_STATE: RequestStateAccessor = () => undefined;

/** The gated call `ctx` belongs to, if the router made it. */
export function gatedCallOf(ctx: ServerContext): GatedCall | undefined {
  const call: unknown = Reflect.get(ctx.mcpReq, GATED_CALL);
  return call instanceof GatedCall ? call : undefined;
}

interface Router {
  routes: Map<string, GatedRoute>;
}

const routers = new WeakMap<McpServer, Router>();

/**
 * Serve calls of `name` on `server` with `route` from now on. The first call
 * on a server installs the router (see the module comment).
 * @throws {Error} when `server` has no `tools/call` handler yet (register the tool first) or
 *   the SDK is not 2.4.x
 */
export function routeGatedTool(server: McpServer, name: string, route: GatedRoute): void {
  const router = routers.get(server) ?? installRouter(server);
  if (router.routes.has(name)) throw new Error(`Gated tool ${name} is already registered`);
  router.routes.set(name, route);
  keepRouteInStep(router, name, route);
}

function installRouter(server: McpServer): Router {
  const low = server.server;
  const sdkToolsCall = storedHandler(low, 'tools/call');
  if (!sdkToolsCall)
    throw new Error('McpServer has no tools/call handler: register the tool first');
  const router: Router = { routes: new Map() };
  // Registered only to be wrapped in the SDK's tools/call seam, then taken out of the table.
  low.setRequestHandler('tools/call', (request, ctx) => {
    const call = gatedCallOf(ctx);
    if (!call) throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error');
    return call.route.serve(request, ctx, call);
  });
  const gatedToolsCall = storedHandler(low, 'tools/call');
  low.removeRequestHandler('tools/call');
  if (!gatedToolsCall) throw new Error('@mrtr/sdk needs @modelcontextprotocol/server 2.4.x');
  // The Protocol's fallback is called as it is, outside any seam: each branch has its own.
  const previous = low.fallbackRequestHandler;
  low.fallbackRequestHandler = async (request, ctx) => {
    if (request.method !== 'tools/call') {
      if (previous) return previous(request, ctx);
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
    }
    const name: unknown = request.params?.name;
    const route = typeof name === 'string' ? router.routes.get(name) : undefined;
    if (!route?.registered.enabled) return sdkToolsCall(request, ctx);
    const requestState = ctx.mcpReq.requestState();
    // A 2025-era call has no retry fields: its answers come only through the `elicitation/create`
    // the shim sends, and its ticket never leaves the server. A client that adds them is refused.
    if (
      (requestState !== undefined || ctx.mcpReq.inputResponses !== undefined) &&
      eraOf(server) === 'legacy'
    )
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'requestState and inputResponses belong to protocol 2026-07-28; on this 2025-era session the server asks through elicitation/create',
        { reason: 'retry_fields_on_session' },
      );
    const call = new GatedCall(route, requestState);
    // The seam sees no requestState, so no verify hook runs on the gate's ticket.
    const mcpReq = Object.assign(
      { ...ctx.mcpReq, requestState: NO_REQUEST_STATE },
      { [GATED_CALL]: call },
    );
    return gatedToolsCall(request, { ...ctx, mcpReq });
  };
  routers.set(server, router);
  return router;
}

/**
 * The handler `Server` stored for `method`, wrapped in its seam. Read
 * through `Protocol#_getRequestHandler`, protected in
 * `@modelcontextprotocol/server` 2.4 and the only way to delegate to
 * `McpServer`'s own handler.
 */
function storedHandler(server: Server, method: string): StoredHandler | undefined {
  const read: unknown = Reflect.get(server, '_getRequestHandler');
  if (typeof read !== 'function')
    throw new Error('@mrtr/sdk needs @modelcontextprotocol/server 2.4.x');
  const handler: unknown = read.call(server, method);
  return typeof handler === 'function' ? (handler as StoredHandler) : undefined;
}

/**
 * Follow the tool's `RegisteredTool` as the application changes it: a
 * rename moves the route, `remove()` drops it; a new callback or argument
 * schema would bypass the gate, so those updates are refused.
 */
function keepRouteInStep(router: Router, name: string, route: GatedRoute): void {
  const registered = route.registered;
  const update = registered.update.bind(registered);
  let current = name;
  registered.update = (updates) => {
    if (updates.callback !== undefined || updates.paramsSchema !== undefined)
      throw new TypeError(
        `${current} is a gated tool: its callback and arguments come from its declaration; register a new one instead`,
      );
    update(updates);
    if (updates.name === undefined || updates.name === current) return;
    router.routes.delete(current);
    if (updates.name !== null) router.routes.set(updates.name, route);
    current = updates.name ?? current;
  };
}
