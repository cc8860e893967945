/**
 * @mrtr/express: mount an `@mrtr/server` MCP endpoint on Express 5.
 *
 * Express's `req` and `res` are `node:http` objects, so this adapter only
 * translates and hands them to `@mrtr/node`: responses stream as they are
 * produced (SSE notifications reach the client before the tool finishes), a
 * client that goes away aborts the handler's `signal`, and the principal
 * comes from your middleware. A body `express.json()` (or `express.text()`,
 * `express.raw()`) already read is passed on: byte for byte with
 * `express.json({ verify: keepRawBody })`, else re-serialized. Errors of your `principal`
 * function go to `next(error)`, so your Express error handlers see them;
 * {@link mcpErrorHandler} answers them, and the body parser's refusals
 * (invalid JSON, too large), with JSON-RPC bodies instead of Express's HTML page.
 *
 * @example
 * ```ts
 * import { createHttpServer, keepRawBody, mcpErrorHandler, mcpHandler } from '@mrtr/express';
 * import { type AnyToolDefinition, createMcpEndpoint } from '@mrtr/server';
 * import express, { type RequestHandler, type Response } from 'express';
 *
 * declare const tools: AnyToolDefinition[]; // yours
 * declare const myAuth: RequestHandler; // your middleware: sets res.locals.principal = { id: 'alice' }
 * const app = express();
 * app.use(myAuth);
 * const endpoint = createMcpEndpoint({ serverInfo: { name: 'notes', version: '1.0.0' }, tools });
 * const principal = (_req: unknown, res: Response) => res.locals.principal;
 * // app.all: every method reaches the endpoint, which answers all but POST with 405 and a JSON-RPC body.
 * app.all('/mcp', express.json({ verify: keepRawBody }), mcpHandler(endpoint, { principal }));
 * app.use('/mcp', mcpErrorHandler());
 * createHttpServer(app).listen(3000, '127.0.0.1'); // Node's own refusals as JSON-RPC too
 * ```
 * @module @mrtr/express
 * @packageDocumentation
 */
import type { IncomingMessage } from 'node:http';
import { toNodeHandler } from '@mrtr/node';
import type { McpEndpoint, Principal } from '@mrtr/server';
import type {
  ErrorRequestHandler,
  Request as ExpressRequest,
  Response as ExpressResponse,
  NextFunction,
  RequestHandler,
} from 'express';

export {
  createHttpServer,
  handleCheckExpectation,
  handleClientError,
  handleConnect,
} from '@mrtr/node';

/** Options of {@link mcpHandler}. */
export interface ExpressHandlerOptions {
  /**
   * The principal your middleware resolved for this request (e.g. `req.user`,
   * `res.locals.principal`). When it returns `undefined`, the endpoint's own
   * `authenticate` decides, and without one the answer is 401.
   */
  principal?: (
    req: ExpressRequest,
    res: ExpressResponse,
  ) => Principal | undefined | Promise<Principal | undefined>;
}

/** The principal resolved for each request in flight, for `@mrtr/node`'s hook. */
const resolved = new WeakMap<IncomingMessage, Principal>();

/**
 * A `verify` function for Express's body parsers that keeps the bytes
 * received as `req.rawBody` (a `Buffer`), which {@link mcpHandler} then
 * hands to the endpoint as they came: `express.json({ verify: keepRawBody })`.
 * Without it the adapter re-serializes what `express.json()` parsed, which
 * cannot carry a number beyond JSON's range (`1e400` parses as `Infinity`):
 * such a body is refused rather than passed on changed.
 * @param req the request (`rawBody` is set on it).
 * @param _res unused.
 * @param buf the body's bytes as received (before any decoding).
 */
export function keepRawBody(req: IncomingMessage, _res: unknown, buf: Buffer): void {
  (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
}

/** Why a body a middleware read cannot be passed on as it came (see {@link keepReadBody}). */
type Unkept = { status: number; code: number; message: string };

const TOO_DEEP: Unkept = {
  status: 400,
  code: -32600,
  message: 'Invalid Request: body nested too deeply',
};
const OUT_OF_RANGE: Unkept = {
  status: 400,
  code: -32602,
  message:
    'Invalid params: the body holds a number too large for JSON (an IEEE 754 double); send it as a string',
};

/**
 * A form `express.urlencoded()` parsed, as `application/x-www-form-urlencoded`
 * text again (a repeated field repeated), or `undefined` when a value is not
 * a string or a list of strings (the `extended` parser's nested objects).
 * Exact for the default parser (`extended: false`); the `extended` one has
 * already taken the brackets off names like `ids[]` (to keep a form exactly
 * as posted, give the parser `verify: keepRawBody`).
 */
function formText(body: object): string | undefined {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === 'string') form.append(name, value);
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string'))
      for (const v of value) form.append(name, v);
    else return undefined;
  }
  return form.toString();
}

const NESTED_FORM: Unkept = {
  status: 415,
  code: -32600,
  message:
    'Unsupported Media Type: a body parser read this form into nested values, which cannot be passed on as the form that was posted; mount this handler before express.urlencoded({ extended: true }), or give the parser verify: keepRawBody',
};

/** `JSON.stringify` writes `null` for a non-finite number: refuse it instead of changing the request. */
function finiteOnly(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) throw OUT_OF_RANGE;
  return value;
}

/**
 * The body a middleware already read, as the bytes `@mrtr/node` passes on
 * (`req.rawBody`): a body parser's own raw copy when it kept one (see
 * {@link keepRawBody}), else the parsed value (`express.json()`'s object
 * re-serialized as JSON, `express.urlencoded()`'s as form text, a string or
 * a `Buffer` as they are).
 * @returns `undefined`, or why the parsed value cannot be serialized again
 *   as it came (nested too deeply for `JSON.stringify`, a number out of range).
 */
function keepReadBody(req: ExpressRequest & { rawBody?: unknown }): Unkept | undefined {
  if (req.rawBody instanceof Buffer || !req.readableDidRead) return undefined;
  const body: unknown = req.body;
  if (body === undefined) req.rawBody = Buffer.alloc(0);
  else if (Buffer.isBuffer(body)) req.rawBody = body;
  else if (typeof body === 'string') req.rawBody = Buffer.from(body);
  else if (
    req.is('application/x-www-form-urlencoded') &&
    body !== null &&
    typeof body === 'object'
  ) {
    // express.urlencoded() parsed it: the form a page handler (the approval page) reads. Nested
    // values are no form any more, and JSON text under a form's type would be read as one field
    // after another: refused.
    const text = formText(body);
    if (text === undefined) return NESTED_FORM;
    req.rawBody = Buffer.from(text);
  } else {
    try {
      req.rawBody = Buffer.from(JSON.stringify(body, finiteOnly));
    } catch (error) {
      return error === OUT_OF_RANGE ? OUT_OF_RANGE : TOO_DEEP;
    }
  }
  return undefined;
}

/**
 * An Express request handler serving `endpoint`. Mount it on the route of
 * your choice (`app.post(path, …)` or `app.all(path, …)`); the endpoint
 * itself answers other methods with 405.
 * @returns `(req, res, next) => Promise<void>`; errors of `principal` go to `next`.
 */
export function mcpHandler(
  endpoint: McpEndpoint,
  options: ExpressHandlerOptions = {},
): RequestHandler {
  const serve = toNodeHandler(endpoint, {
    path: false,
    principal: (req) => resolved.get(req),
  });
  return async (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => {
    let principal: Principal | undefined;
    try {
      principal = options.principal ? await options.principal(req, res) : undefined;
    } catch (error) {
      next(error);
      return;
    }
    if (principal) resolved.set(req, principal);
    const unkept = keepReadBody(req);
    if (unkept) {
      const error = { code: unkept.code, message: unkept.message };
      res.status(unkept.status).json({ jsonrpc: '2.0', error });
      return;
    }
    await serve(req, res);
  };
}

/** What body-parser errors carry (`express.json()` and friends). */
interface BodyParserError {
  type?: string;
  status?: number;
}

const PARSER_ERRORS: Record<string, [number, number, string]> = {
  'entity.parse.failed': [400, -32700, 'Parse error: body is not valid JSON'],
  'entity.too.large': [413, -32600, 'Request body too large'],
  'entity.verify.failed': [400, -32600, 'Invalid request body'],
  'encoding.unsupported': [415, -32600, 'Unsupported Content-Encoding'],
  'charset.unsupported': [415, -32600, 'Unsupported charset: use UTF-8'],
  'request.size.invalid': [400, -32600, 'Request body length does not match Content-Length'],
};

/** Options of {@link mcpErrorHandler}. */
export interface ExpressErrorHandlerOptions {
  /** Called with errors that are not a client's fault (default `console.error`). */
  onError?: (error: unknown) => void;
}

/**
 * An Express error handler for the MCP route, so that every answer there is
 * a JSON-RPC body. A body parser's refusal (`express.json()`: invalid JSON,
 * too large, an unsupported charset or encoding) becomes the error
 * `@mrtr/server` itself would give (`-32700` or `-32600`, no id) with the
 * parser's HTTP status; another error with a 4xx `status` (`http-errors`,
 * e.g. from an auth middleware) keeps its status with `-32600` and its
 * message; anything else (a throwing `principal` included) is 500 with
 * `-32603` and no detail, and goes to `onError`. Mount it after the route:
 * `app.use(path, mcpErrorHandler())`.
 */
export function mcpErrorHandler(options: ExpressErrorHandlerOptions = {}): ErrorRequestHandler {
  const onError = options.onError ?? ((e: unknown) => console.error('[mrtr] express error', e));
  return (error: unknown, _req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const { type, status, message } = (error ?? {}) as BodyParserError & { message?: unknown };
    const known = type === undefined ? undefined : PARSER_ERRORS[type];
    if (known) {
      const [httpStatus, code, text] = known;
      res.status(httpStatus).json({ jsonrpc: '2.0', error: { code, message: text } });
    } else if (typeof status === 'number' && status >= 400 && status < 500) {
      const text = typeof message === 'string' ? message.slice(0, 200) : 'Invalid Request';
      res.status(status).json({ jsonrpc: '2.0', error: { code: -32600, message: text } });
    } else {
      onError(error);
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' } });
    }
  };
}
