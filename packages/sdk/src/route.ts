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
  /**
   * The complete result of a 2025-era call whose question was withdrawn
   * because its ticket could no longer be answered (see {@link GatedCall}).
   */
  expired(): CallToolResult;
}

/** Why the bridge stopped waiting for a person's answer: the reason the withdrawn question carries. */
class ConfirmationExpired extends Error {
  override name = 'ConfirmationExpired';
  constructor() {
    super('The confirmation expired before it was answered; nothing was changed');
  }
}

/**
 * One gated call, carried in its context (under a symbol, so the SDK's
 * copies of the context keep it). `requestState` is the string received on
 * the wire; on a 2025-era connection, where the SDK re-enters the handler in
 * process after each `elicitation/create`, it is the last ticket the gate
 * minted in this call, which never leaves the server.
 *
 * On a 2025-era connection the call also bounds the SDK shim's wait for
 * the person's answer: `signal` (given to the shim as the request's signal,
 * and aborted when the request's own is) is aborted once the ticket being
 * answered can no longer be answered ({@link GatedCall.waitUntil}), which
 * withdraws the `elicitation/create` (the SDK sends
 * `notifications/cancelled`) and ends the call as {@link GatedCall.expired}.
 * The shim's own `roundTimeoutMs` still applies when it is sooner.
 */
export class GatedCall {
  /** The signal the SDK's shim waits on: the request's own, plus the ticket's end (2025-era only). */
  readonly signal: AbortSignal | undefined;
  /** When the wait for the current ticket's answer ends, milliseconds since the epoch (2025-era only). */
  answerBy: number | undefined;
  readonly #wait: AbortController | undefined;
  readonly #outer: AbortSignal | undefined;
  #unlink: (() => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #expired = false;

  /**
   * @param outer the request's signal, on a 2025-era connection only: the call then keeps a
   *   signal of its own, aborted with it, that {@link GatedCall.waitUntil} can end sooner.
   */
  constructor(
    readonly route: GatedRoute,
    public requestState: unknown,
    outer?: AbortSignal,
  ) {
    this.#outer = outer;
    if (!outer) return;
    const wait = new AbortController();
    this.#wait = wait;
    this.signal = wait.signal;
    if (outer.aborted) wait.abort(outer.reason);
    else {
      const follow = () => wait.abort(outer.reason);
      outer.addEventListener('abort', follow, { once: true });
      this.#unlink = () => outer.removeEventListener('abort', follow);
    }
  }

  /**
   * Wait for the person's answer until `deadline` (milliseconds since the
   * epoch, on `Date.now`'s clock): then the question is withdrawn. Replaces
   * an earlier deadline; does nothing on a 2026-07-28 call (no wait here).
   */
  waitUntil(deadline: number): void {
    if (!this.#wait) return;
    this.answered();
    const expire = () => {
      this.#expired = true;
      this.#wait?.abort(new ConfirmationExpired());
    };
    this.#timer = setTimeout(expire, Math.max(0, deadline - Date.now()));
  }

  /** An answer came (the tool runs again): no deadline until it asks again. */
  answered(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Whether the wait ended because the ticket could no longer be answered (not a cancelled request). */
  get expired(): boolean {
    return this.#expired && !this.#outer?.aborted;
  }

  /** The call is over: no timer, no listener left behind. */
  dispose(): void {
    this.answered();
    this.#unlink?.();
    this.#unlink = undefined;
  }
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
    const legacy = eraOf(server) === 'legacy';
    const call = new GatedCall(route, requestState, legacy ? ctx.mcpReq.signal : undefined);
    // The seam sees no requestState, so no verify hook runs on the gate's ticket; on a 2025-era
    // connection the shim waits on the call's signal, which ends when the ticket does.
    const mcpReq = Object.assign(
      { ...ctx.mcpReq, requestState: NO_REQUEST_STATE },
      call.signal ? { signal: call.signal } : {},
      { [GATED_CALL]: call },
    );
    try {
      return await gatedToolsCall(request, { ...ctx, mcpReq });
    } catch (error) {
      // The shim rethrows what ended its wait when the request's signal is aborted.
      if (call.expired) return route.expired();
      throw error;
    } finally {
      call.dispose();
    }
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
