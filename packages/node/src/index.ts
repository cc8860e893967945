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
import type { McpEndpoint, Principal } from '@mrtr/server';

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
  /** Called with errors of `principal` (default `console.error`); the client gets `-32603`. */
  onError?: (error: unknown) => void;
}

const JSON_TYPE = { 'content-type': 'application/json' } as const;

/** A JSON-RPC error response without an id (`basic/index`: the id could not be read). */
function rpcError(status: number, code: number, message: string): Response {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message } });
  return new Response(body, { status, headers: JSON_TYPE });
}

/**
 * Adapt an MCP endpoint to a `node:http` request listener. Request and
 * response conversion is `@hono/node-server`'s: responses stream as they are
 * produced (SSE notifications reach the client before the tool finishes), and
 * a client that goes away aborts the handler's `signal`. A request the
 * conversion refuses (no or an invalid `Host`, a backslash in the path) gets
 * 400 with JSON-RPC `-32600`; a throwing `principal` gets 500 with `-32603`.
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
  const onError = options.onError ?? ((e: unknown) => console.error('[mrtr] adapter error', e));
  const listener = getRequestListener(
    async (request: Request, env: HttpBindings | { incoming: unknown }) => {
      if (path !== false) {
        // The raw request-target equal to the path (query aside) needs no URL parse: the common case.
        const target = (env.incoming as IncomingMessage).url;
        const direct = target === path || target?.startsWith(`${path}?`);
        if (!direct && new URL(request.url).pathname !== path)
          return rpcError(404, -32600, 'Not Found: no MCP endpoint at this path');
      }
      const principal = principalOf
        ? await principalOf(env.incoming as IncomingMessage)
        : undefined;
      return endpoint(request, principal ? { principal } : {});
    },
    {
      errorHandler(error) {
        if (error instanceof RequestError)
          return rpcError(400, -32600, `Bad Request: ${error.message}`);
        onError(error);
        return rpcError(500, -32603, 'Internal error');
      },
    },
  );
  return async (req, res) => {
    await listener(req, res);
  };
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
  const body = JSON.stringify({
    jsonrpc: '2.0',
    error: { code: -32600, message: `${reason}: the HTTP request could not be parsed${why}` },
  });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * A `node:http` server serving `endpoint` ({@link toNodeHandler}) whose
 * unparsable requests get JSON-RPC bodies ({@link handleClientError}). Node's
 * own check for a missing `Host` (an empty 400) is off: the handler answers
 * such a request with 400 and a JSON-RPC body instead.
 * @returns the server, not yet listening.
 */
export function createMcpHttpServer(
  endpoint: McpEndpoint,
  options: NodeHandlerOptions = {},
): Server {
  const server = createServer({ requireHostHeader: false }, toNodeHandler(endpoint, options));
  server.on('clientError', handleClientError);
  return server;
}
