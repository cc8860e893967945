/**
 * A `node:http` server on which every answer has a JSON-RPC body: the
 * requests Node answers itself, and those no framework should serve (two
 * `Host` fields, a target that is not a path), are answered here.
 */
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import { absoluteTargetProblem, validHost } from '@mrtr/server';
import { JSON_TYPE, rawRpcError, rpcError } from './json-rpc.js';

/**
 * Sockets that close after the answer under way: one refused with
 * `Connection: close`, or one whose later bytes did not parse. Bytes that
 * arrive meanwhile get no answer of their own.
 */
const closing = new WeakSet<Duplex>();

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
 * 400. When the bytes that did not parse followed requests whose responses
 * are still being made (pipelined, or sent after `Connection: close`), those
 * responses go out first, whole and in order, and the connection closes
 * after them; bytes sent after `Connection: close` are not answered. Nothing
 * is written to a socket that is gone.
 * @example `server.on('clientError', handleClientError)`
 */
export function handleClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const inFlight = current(socket);
  const pending = inFlight != null && !inFlight.writableFinished;
  if (closing.has(socket)) {
    // Closing after the answer under way: what follows it gets no answer of its own.
    if (!pending) socket.end();
    return;
  }
  // Bytes that follow a request read whole (or a later request's deadline), while its answer is
  // still being made: Node's own listener would answer 400 over it, or cut it off. The client is
  // owed that answer, and its request may already have changed something. Not so for an error
  // inside that request itself (its body, its deadline): its handler waits for a body that will
  // not come.
  if (pending && inFlight.req?.complete === true) {
    closing.add(socket);
    // Every answer already owed goes out, in order: when one finishes, Node makes the next
    // queued one current.
    const afterOwed = () => {
      const next = current(socket);
      if (next && !next.writableFinished) next.once('finish', afterOwed);
      else if (error.code === 'HPE_CLOSED_CONNECTION' || !socket.writable) socket.end();
      else socket.end(parseRefusal(error));
    };
    afterOwed();
    return;
  }
  if (inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  socket.end(parseRefusal(error));
}

/** The response Node is writing on `socket` now (the first of those it queued), if any. */
function current(socket: Duplex): ServerResponse | null | undefined {
  return (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
}

/** The raw HTTP/1.1 response for a request the parser refused. */
function parseRefusal(error: Error & { code?: string }): string {
  const [status, reason] = CLIENT_ERROR_STATUS[error.code ?? ''] ?? [400, 'Bad Request'];
  const why = error.code ? ` (${error.code})` : '';
  // A deadline is no parse failure: the request simply did not arrive whole in time.
  const what =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? 'the HTTP request did not arrive whole within the server’s time limit'
      : 'the HTTP request could not be parsed';
  return rawRpcError(status, reason, `${reason}: ${what}${why}`);
}

/**
 * A `checkExpectation` listener for a `node:http` server: a request whose
 * `Expect` is not `100-continue` gets 417 (RFC 9110 §10.1.1) with a JSON-RPC
 * error body (`-32600`, no id) and `Connection: close`, instead of Node's
 * empty 417. The request itself is not served.
 * @example `server.on('checkExpectation', handleCheckExpectation)`
 */
export function handleCheckExpectation(_req: IncomingMessage, res: ServerResponse): void {
  refuse(res, 417, 'Expectation Failed: the only expectation understood is 100-continue');
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

/** Answer with a JSON-RPC error body (`-32600`, no id) and close the connection. */
export function refuse(res: ServerResponse, status: number, message: string): void {
  // A pipelined request's response has no socket until the answers before it are out.
  const socket = res.req?.socket ?? res.socket;
  if (socket) closing.add(socket);
  const { body } = rpcError(status, -32600, message);
  const length = String(Buffer.byteLength(body));
  res.writeHead(status, { ...JSON_TYPE, 'content-length': length, connection: 'close' }).end(body);
}

/**
 * Why `req` cannot be served by any route, or `undefined`: an HTTP/1.1
 * request without `Host`, with more than one, or with one that is not one
 * `host[:port]` (RFC 9112 §3.2: 400); a request-target that is neither a
 * path, nor an absolute URL naming the `Host` sent
 * ({@link absoluteTargetProblem}), nor `*` for `OPTIONS` (RFC 9112 §3.2.4).
 * HTTP/1.0 may omit `Host`: the application decides.
 */
export function requestProblem(req: IncomingMessage): string | undefined {
  // Counted in `rawHeaders` (Node keeps only the first `Host` in `headers`), without the
  // per-request object `headersDistinct` would build.
  const raw = req.rawHeaders;
  let host: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (host !== undefined) return 'Bad Request: more than one Host header';
    host = raw[i + 1] as string;
  }
  if (host === undefined) {
    return req.httpVersionMajor === 1 && req.httpVersionMinor === 0
      ? undefined
      : 'Bad Request: Missing host header';
  }
  if (!validHost(host)) return 'Bad Request: Host must be one host[:port]';
  const target = req.url ?? '';
  // A path, even one a URL parser would rewrite (a backslash): each framework reads its own.
  if (target.startsWith('/')) return undefined;
  if (target === '*') return req.method === 'OPTIONS' ? undefined : 'Bad Request: * is for OPTIONS';
  // Lower case as sent: frameworks take `HTTP://…` for a path and refuse it without a body.
  if (/^https?:\/\//.test(target)) return absoluteTargetProblem(target, host);
  return 'Bad Request: the request-target must be a path';
}

/**
 * Default `headersTimeout` of {@link createHttpServer}: a request's head must
 * arrive within 20 s (Node's own default is 60 s), in milliseconds.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 20_000;
/**
 * Default `requestTimeout` of {@link createHttpServer}: a whole request,
 * body included, within 60 s (Node's own default is 300 s), in milliseconds.
 * An MCP request body is a few KiB; a client that trickles one holds a
 * socket and its buffers all that time. Then `408` with a JSON-RPC body.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/**
 * Default `connectionsCheckingInterval` of {@link createHttpServer}: how often
 * Node looks for requests past `headersTimeout` or `requestTimeout`, in
 * milliseconds (Node's own default is 30 s, so a deadline could pass by up to
 * that much before its `408`).
 */
export const DEFAULT_CONNECTIONS_CHECKING_INTERVAL_MS = 2_000;

/**
 * How many header fields Node copies into `req.headers` when the server's
 * `maxHeadersCount` is unset (`null`); the fields after them are in
 * `rawHeaders` only, for a few dozen more.
 */
const NODE_DEFAULT_HEADER_FIELDS = 1000;

/**
 * Why `req` cannot be read whole, or `undefined`: it holds more header
 * fields than its server's `maxHeadersCount` (default 1,000) lets Node copy
 * into `req.headers`, so a `Content-Type` or `Authorization` sent after them
 * would read as never sent (a 415 or 401 that blames the client for what it
 * did send). A server with `maxHeadersCount` 0 keeps every field: nothing
 * to say. Answer it 431 (RFC 6585 §5). No MCP request needs that many.
 */
export function headerFieldsProblem(req: IncomingMessage): string | undefined {
  const server = (req.socket as { server?: { maxHeadersCount?: number | null } } | undefined)
    ?.server;
  const limit = server?.maxHeadersCount;
  if (limit === 0) return undefined;
  const fields = typeof limit === 'number' && limit > 0 ? limit : NODE_DEFAULT_HEADER_FIELDS;
  if (req.rawHeaders.length / 2 <= fields) return undefined;
  return `Request Header Fields Too Large: more than ${fields} header fields`;
}

/**
 * `http.createServer` for any framework (pass an Express `app`, or give it
 * as `createServer` to `@hono/node-server`'s `serve`), on which every answer
 * has a JSON-RPC body (`-32600`, no id) where Node or the framework would
 * send an empty one or none:
 * - a request {@link requestProblem} names gets 400 and `Connection: close`
 *   before `listener` sees it; `TRACE` gets 405 (a web `Request` cannot
 *   carry it); `OPTIONS *` gets 204, as no framework routes it; a
 *   `Transfer-Encoding` other than `chunked` (e.g. `gzip, chunked`, whose
 *   body Node would pass on still compressed) gets 501; a request of more
 *   header fields than `maxHeadersCount` (default 1,000), whose later fields
 *   Node leaves out of `req.headers`, gets 431;
 * - Node's own refusals: unparsable requests ({@link handleClientError}),
 *   an `Expect` other than `100-continue` (417, {@link handleCheckExpectation}),
 *   `CONNECT` (405, {@link handleConnect});
 * - Node's own empty 400 for a missing `Host` is off (`requireHostHeader:
 *   false`): the check above answers instead.
 * - a request's head must arrive within {@link DEFAULT_HEADERS_TIMEOUT_MS}
 *   and the whole request within {@link DEFAULT_REQUEST_TIMEOUT_MS}, unless
 *   `options` says otherwise (`408`; the head's deadline never beyond a
 *   shorter `requestTimeout` given), checked every
 *   {@link DEFAULT_CONNECTIONS_CHECKING_INTERVAL_MS};
 * @param options `node:http` server options (`requireHostHeader` is always `false`).
 * @param listener the framework's request listener. Give it here: a
 *   `request` listener added to the server later would run on requests
 *   already answered.
 * @returns the server, not yet listening.
 * @throws {TypeError} without a listener.
 * @example
 * ```ts
 * import { serve } from '@hono/node-server';
 * import { createHttpServer } from '@mrtr/node';
 * import { Hono } from 'hono';
 *
 * const app = new Hono();
 * serve({ fetch: app.fetch, port: 3000, hostname: '127.0.0.1', createServer: createHttpServer });
 * ```
 */
export function createHttpServer(
  options: ServerOptions | RequestListener = {},
  listener?: RequestListener,
): Server {
  const [settings, handle] = typeof options === 'function' ? [{}, options] : [options, listener];
  // A `request` listener added later would also run on what this server already answered.
  if (typeof handle !== 'function')
    throw new TypeError('createHttpServer needs the request listener (your app) as an argument');
  // A longer head deadline given alone stretches the request's (Node wants head ≤ request).
  const requestTimeout =
    settings.requestTimeout ?? Math.max(DEFAULT_REQUEST_TIMEOUT_MS, settings.headersTimeout ?? 0);
  // Node refuses a head deadline beyond the request's own (0: no request deadline).
  const headersTimeout =
    settings.headersTimeout ??
    (requestTimeout > 0
      ? Math.min(DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout)
      : DEFAULT_HEADERS_TIMEOUT_MS);
  const bounds = {
    ...settings,
    headersTimeout,
    requestTimeout,
    // Node looks for requests past their deadline this often; at its default, 30 s late.
    connectionsCheckingInterval:
      settings.connectionsCheckingInterval ?? DEFAULT_CONNECTIONS_CHECKING_INTERVAL_MS,
    requireHostHeader: false,
  };
  const server = createServer(bounds, (req, res) => {
    // A request pipelined behind one refused with `Connection: close` is not served (RFC 9112
    // §9.6): the connection closes once the refusal is out.
    if (closing.has(req.socket)) return void req.resume();
    const tooMany = headerFieldsProblem(req);
    if (tooMany !== undefined) return refuse(res, 431, tooMany);
    const problem = requestProblem(req);
    if (problem !== undefined) return refuse(res, 400, problem);
    // `OPTIONS *` asks about the server, not a resource: no framework routes it (RFC 9110 §9.3.7).
    if (req.url === '*') return void res.writeHead(204).end();
    // A web `Request` cannot carry TRACE (Fetch standard), and reflecting a request helps no MCP client.
    if (req.method === 'TRACE' || req.method === 'TRACK')
      return refuse(res, 405, 'Method not allowed: TRACE is not served');
    // Node decodes `chunked` and passes any other coding's bytes on as the body (RFC 9112 §6.1).
    const coding = req.headers['transfer-encoding'];
    if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked')
      return refuse(res, 501, 'Not Implemented: the only transfer coding understood is chunked');
    handle(req, res);
  });
  server.on('clientError', handleClientError);
  server.on('checkExpectation', handleCheckExpectation);
  server.on('connect', handleConnect);
  return server;
}
