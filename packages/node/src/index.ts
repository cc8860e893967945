/**
 * @mrtr/node: mount an `@mrtr/server` endpoint on `node:http`.
 *
 * Every answer is a JSON-RPC body, even to a request Node's HTTP parser or
 * the request conversion refuses (a control byte in a header, no `Host`):
 * `createMcpHttpServer` wires both, or add {@link handleClientError} to a
 * server of your own.
 *
 * @example
 * ```ts
 * import { createMcpHttpServer } from '@mrtr/node';
 * import { type AnyToolDefinition, createMcpEndpoint, type McpEndpointOptions } from '@mrtr/server';
 *
 * declare const tools: AnyToolDefinition[]; // yours
 * declare const authenticate: McpEndpointOptions['authenticate']; // yours
 * const endpoint = createMcpEndpoint({ serverInfo: { name: 'notes', version: '1.0.0' }, tools, authenticate });
 * createMcpHttpServer(endpoint, { path: '/mcp' }).listen(3000, '127.0.0.1');
 * ```
 * @module @mrtr/node
 * @packageDocumentation
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { getRequestListener, type HttpBindings, RequestError } from '@hono/node-server';
import {
  absoluteTargetProblem,
  type HttpReply,
  type McpEndpoint,
  type Principal,
  targetPath,
} from '@mrtr/server';
import { directlyServable, nodeExchange, writeReply } from './direct.js';
import { JSON_TYPE, rpcError, rpcResponse } from './json-rpc.js';
import { createHttpServer, headerFieldsProblem, refuse } from './server.js';

export {
  createHttpServer,
  DEFAULT_CONNECTIONS_CHECKING_INTERVAL_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  handleCheckExpectation,
  handleClientError,
  handleConnect,
  headerFieldsProblem,
  requestProblem,
} from './server.js';

/** Options of {@link toNodeHandler}. */
export interface NodeHandlerOptions {
  /**
   * The MCP endpoint path (default `/mcp`); other paths get 404. `false`
   * serves every path, for a framework whose router already chose the route.
   */
  path?: string | false;
  /**
   * The principal the host already authenticated for this request (e.g. set
   * by a reverse proxy or earlier middleware on `req`). When it returns
   * `undefined`, the endpoint's own `authenticate` decides.
   */
  principal?: (req: IncomingMessage) => Principal | undefined | Promise<Principal | undefined>;
  /** Called with errors of `principal` and replies Node refuses (default `console.error`); the client gets `-32603`. What it throws is ignored. */
  onError?: (error: unknown) => void;
  /**
   * `true`: convert every request to a web `Request` and every answer from a
   * web `Response` (`@hono/node-server`), as for an endpoint without
   * `serve`. Default `false`: a plain HTTP/1 request (see below) is served
   * directly. Both paths run the same endpoint code and give the same answers.
   */
  webStandard?: boolean;
}

/**
 * Answer 431 when `req` holds more header fields than Node keeps
 * ({@link headerFieldsProblem}), on a server of the user's own as on
 * `createHttpServer`; `true` when it did.
 */
function refusedForHeaderFields(req: IncomingMessage, res: ServerResponse): boolean {
  const problem = headerFieldsProblem(req);
  if (problem === undefined) return false;
  refuse(res, 431, problem);
  return true;
}

/**
 * Adapt an MCP endpoint to a `node:http` request listener. Responses stream
 * as they are produced (SSE notifications reach the client before the tool
 * finishes), and a client that goes away aborts the handler's `signal`.
 *
 * Two paths, one endpoint: an HTTP/1 request with a plain `Host`
 * (`name[:port]`, lower case) and request-target (`/path?query`, no dot
 * segments), whose body no middleware has read, is read and answered
 * directly (`McpEndpoint.serve`): no web `Request` or `Response` is built
 * unless `authenticate` or a handler asks for `request` beyond its headers.
 * Any other request, and every request with `webStandard` or to an endpoint
 * without `serve`, goes through `@hono/node-server`'s conversion. On either
 * path only a request-target whose path is `path` exactly as sent is served
 * (query aside): `/a/../mcp`, `/%6dcp` and `/mcp/` get 404 with `-32600`, as
 * any other path, so a proxy in front that allows `/mcp` by its exact path
 * lets the same requests through. A request the
 * conversion refuses (no or an invalid `Host`, a backslash in the path), and
 * one whose absolute-form target names another host than `Host`
 * (`absoluteTargetProblem` of `@mrtr/server`), gets 400 with JSON-RPC
 * `-32600`; a throwing `principal` gets 500 with `-32603`; a request of
 * more header fields than the server keeps (1,000 by default) gets 431 with
 * `-32600` ({@link headerFieldsProblem}): Node left its later fields out.
 *
 * A body an earlier middleware already read is taken from `req.rawBody` (a
 * `Buffer`) when present.
 * @returns `(req, res) => Promise<void>` for `http.createServer`.
 */
export function toNodeHandler(
  endpoint: McpEndpoint,
  options: NodeHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const path = options.path ?? '/mcp';
  const principalOf = options.principal;
  const report = options.onError ?? ((e: unknown) => console.error('[mrtr] adapter error', e));
  // An onError that throws must not turn into an unhandled rejection (a crash on Node 20) or a lost reply.
  const onError = (error: unknown) => {
    try {
      report(error);
    } catch {}
  };
  const listener = getRequestListener(
    async (request: Request, env: HttpBindings | { incoming: unknown }) => {
      const incoming = env.incoming as IncomingMessage;
      // Only this path sees an absolute-form target: the direct one takes `/path` targets alone.
      const absolute = absoluteTargetProblem(incoming.url ?? '', incoming.headers.host);
      if (absolute) return rpcResponse(400, -32600, absolute);
      // The path as sent, not as a URL parser normalizes it (`/a/../mcp`): the same paths as the direct path.
      if (path !== false && targetPath(incoming.url ?? '') !== path)
        return rpcResponse(404, -32600, 'Not Found: no MCP endpoint at this path');
      const principal = principalOf ? await principalOf(incoming) : undefined;
      return endpoint(request, principal ? { principal } : {});
    },
    {
      errorHandler(error) {
        if (error instanceof RequestError)
          return rpcResponse(400, -32600, `Bad Request: ${error.message}`);
        onError(error);
        return rpcResponse(500, -32603, 'Internal error');
      },
    },
  );
  const serve = options.webStandard ? undefined : endpoint.serve;
  if (!serve)
    return async (req, res) => {
      if (!refusedForHeaderFields(req, res)) await listener(req, res);
    };
  return async (req, res) => {
    if (refusedForHeaderFields(req, res)) return;
    const target = req.url;
    const here = path === false || target === path || target?.startsWith(`${path}?`);
    if (!here || !directlyServable(req)) return listener(req, res);
    let principal: Principal | undefined;
    try {
      principal = principalOf ? await principalOf(req) : undefined;
    } catch (error) {
      onError(error);
      return writeReply(res, replyOf(rpcError(500, -32603, 'Internal error')));
    }
    try {
      const reply = await serve(nodeExchange(req, res), principal ? { principal } : {});
      await writeReply(res, reply);
    } catch (error) {
      // serve never rejects; this is a reply Node refused (an invalid header) or a broken socket. Never a crash.
      onError(error);
      if (!res.headersSent) await writeReply(res, replyOf(rpcError(500, -32603, 'Internal error')));
      else res.destroy();
    }
  };
}

/** A JSON-RPC error of this adapter as a reply of the direct path. */
function replyOf(error: { status: number; body: string }): HttpReply {
  return { status: error.status, headers: JSON_TYPE, body: error.body };
}

/**
 * A `node:http` server serving `endpoint` ({@link toNodeHandler}) on
 * {@link createHttpServer}: every request gets a JSON-RPC body, including
 * those Node answers itself and those no route may serve (no or two `Host`
 * fields, a target that is not a path).
 * @returns the server, not yet listening.
 */
export function createMcpHttpServer(
  endpoint: McpEndpoint,
  options: NodeHandlerOptions = {},
): Server {
  return createHttpServer({}, toNodeHandler(endpoint, options));
}
