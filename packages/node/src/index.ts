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
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { getRequestListener, type HttpBindings, RequestError } from '@hono/node-server';
import {
  absoluteTargetProblem,
  type HttpReply,
  type McpEndpoint,
  type Principal,
} from '@mrtr/server';
import { directlyServable, nodeExchange, writeReply } from './direct.js';

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

const JSON_TYPE = { 'content-type': 'application/json' } as const;

/** A JSON-RPC error without an id (`basic/index`: the id could not be read). */
function rpcError(status: number, code: number, message: string) {
  return { status, body: JSON.stringify({ jsonrpc: '2.0', error: { code, message } }) };
}

/** {@link rpcError} as a web `Response`, for the converted path. */
function rpcResponse(status: number, code: number, message: string): Response {
  const { body } = rpcError(status, code, message);
  return new Response(body, { status, headers: JSON_TYPE });
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
 * without `serve`, goes through `@hono/node-server`'s conversion. A request the
 * conversion refuses (no or an invalid `Host`, a backslash in the path), and
 * one whose absolute-form target names another host than `Host`
 * (`absoluteTargetProblem` of `@mrtr/server`), gets 400 with JSON-RPC
 * `-32600`; a throwing `principal` gets 500 with `-32603`.
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
      if (path !== false) {
        // The raw request-target equal to the path (query aside) needs no URL parse: the common case.
        const target = incoming.url;
        const direct = target === path || target?.startsWith(`${path}?`);
        if (!direct && new URL(request.url).pathname !== path)
          return rpcResponse(404, -32600, 'Not Found: no MCP endpoint at this path');
      }
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
      await listener(req, res);
    };
  return async (req, res) => {
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

/** A whole HTTP/1.1 response with a JSON-RPC error body and `Connection: close`, for a raw socket. */
function rawRpcError(status: number, reason: string, message: string): string {
  const { body } = rpcError(status, -32600, message);
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** Statuses Node's own `clientError` answer uses, by parser error code. */
const CLIENT_ERROR_STATUS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Payload Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

/**
 * A `clientError` listener for a `node:http` server: a request Node's HTTP
 * parser refuses (a control byte in a header value, a malformed request line
 * or `Content-Length`, headers too large) gets a JSON-RPC error body
 * (`-32600`, no id) with Node's status (400; 431 for headers too large; 408
 * on a request timeout) and `Connection: close`, instead of Node's empty
 * 400. Nothing is written once a response is under way or the socket is gone.
 * @example `server.on('clientError', handleClientError)`
 */
export function handleClientError(error: Error & { code?: string }, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, reason] = CLIENT_ERROR_STATUS[error.code ?? ''] ?? [400, 'Bad Request'];
  const why = error.code ? ` (${error.code})` : '';
  socket.end(rawRpcError(status, reason, `${reason}: the HTTP request could not be parsed${why}`));
}

/**
 * A `node:http` server serving `endpoint` ({@link toNodeHandler}) on which
 * every request gets a JSON-RPC body, including those Node answers itself:
 * unparsable ones ({@link handleClientError}); one without `Host` (Node's
 * own empty 400 is off, the handler answers with 400 instead); an `Expect`
 * other than `100-continue` (417, RFC 9110 §10.1.1); and `CONNECT` (405:
 * this is no proxy), which Node would otherwise drop without an answer.
 * @returns the server, not yet listening.
 */
export function createMcpHttpServer(
  endpoint: McpEndpoint,
  options: NodeHandlerOptions = {},
): Server {
  const server = createServer({ requireHostHeader: false }, toNodeHandler(endpoint, options));
  server.on('clientError', handleClientError);
  server.on('checkExpectation', handleCheckExpectation);
  server.on('connect', handleConnect);
  return server;
}

/**
 * A `checkExpectation` listener for a `node:http` server: a request whose
 * `Expect` is not `100-continue` gets 417 (RFC 9110 §10.1.1) with a JSON-RPC
 * error body (`-32600`, no id) and `Connection: close`, instead of Node's
 * empty 417. The request itself is not served.
 * @example `server.on('checkExpectation', handleCheckExpectation)`
 */
export function handleCheckExpectation(_req: IncomingMessage, res: ServerResponse): void {
  const message = 'Expectation Failed: the only expectation understood is 100-continue';
  const { body } = rpcError(417, -32600, message);
  const length = String(Buffer.byteLength(body));
  res.writeHead(417, { ...JSON_TYPE, 'content-length': length, connection: 'close' }).end(body);
}

/**
 * A `connect` listener for a `node:http` server: `CONNECT` (a request for a
 * tunnel; an MCP server is no proxy) gets 405 with a JSON-RPC error body
 * (`-32600`, no id) and the connection closes, where without a listener
 * Node drops the connection with no answer.
 * @example `server.on('connect', handleConnect)`
 */
export function handleConnect(_req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  socket.end(rawRpcError(405, 'Method Not Allowed', 'Method not allowed: use POST'));
}
