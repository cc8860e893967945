/**
 * @mrtr/express: mount an `@mrtr/server` MCP endpoint on Express 5.
 *
 * Express's `req` and `res` are `node:http` objects, so this adapter only
 * translates and hands them to `@mrtr/node`: responses stream as they are
 * produced (SSE notifications reach the client before the tool finishes), a
 * client that goes away aborts the handler's `signal`, and the principal
 * comes from your middleware. Without a body parser in front, the handler
 * reads the body and the endpoint judges it (charset, coding, JSON) exactly
 * as on `@mrtr/node`. A body `express.json()` (or `express.text()`,
 * `express.raw()`) already read is passed on: byte for byte with
 * `express.json({ verify: keepRawBody })`, else re-serialized. Errors of your `principal`
 * function go to `next(error)`, so your Express error handlers see them;
 * {@link mcpErrorHandler} answers them, and the body parser's refusals
 * (as the endpoint would), with JSON-RPC bodies instead of Express's HTML page.
 *
 * @example
 * ```ts
 * import { createHttpServer, mcpErrorHandler, mcpHandler } from '@mrtr/express';
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
 * // No body parser in front: the endpoint reads the body (behind one: express.json({ verify: keepRawBody })).
 * app.all('/mcp', mcpHandler(endpoint, { principal }));
 * app.use('/mcp', mcpErrorHandler());
 * createHttpServer(app).listen(3000, '127.0.0.1'); // Node's own refusals as JSON-RPC too
 * ```
 * @module @mrtr/express
 * @packageDocumentation
 */
import type { IncomingMessage } from 'node:http';
import { toNodeHandler } from '@mrtr/node';
import { createMcpEndpoint, type McpEndpoint, type Principal } from '@mrtr/server';
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

const REPLACED: Unkept = {
  status: 400,
  code: -32700,
  message:
    'Parse error: a body parser read this body before the handler, and the U+FFFD in what it made may stand for bytes that were not UTF-8 (which are refused); mount this handler before the body parser, or give the parser verify: keepRawBody',
};

const TWO_BOMS: Unkept = {
  status: 400,
  code: -32700,
  message: 'Parse error: body is not valid JSON (it starts with two byte order marks)',
};

const CONSUMED: Unkept = {
  status: 400,
  code: -32700,
  message:
    'Parse error: a middleware read this body before the handler and kept nothing of it (no req.body, no req.rawBody); mount this handler before that middleware, or have its body parser keep the bytes with verify: keepRawBody',
};

const STRING_NOT_AS_POSTED: Unkept = {
  status: 400,
  code: -32600,
  message:
    'Invalid Request: a body parser read this body into a string whose length is not that of the body posted (a JSON parser with strict: false decodes a JSON string literal; a text parser may drop a byte order mark), so it cannot be passed on as it came; mount this handler before the body parser, or give the parser verify: keepRawBody',
};

/**
 * Whether the string a body parser made is the body's text as posted: a text
 * parser keeps every byte but one leading BOM, so its UTF-8 length is the
 * declared `Content-Length`, or 3 bytes less. A JSON parser given
 * `strict: false` makes the value of a JSON string literal, written 2 bytes
 * longer (its quotes) plus at least 1 for each `"` or `\` in it (escaped),
 * and no escape is shorter than what it decodes to: a value that is JSON text
 * holds no such character (`{}`, `[1]`; 2 bytes longer) or at least two
 * (4 or more), never exactly 3. Without a length to compare (a chunked body)
 * it cannot be told, and is refused.
 */
function isPostedText(req: ExpressRequest, body: string): boolean {
  const declared = req.headers['content-length'];
  if (declared === undefined) return false;
  const bytes = Buffer.byteLength(body);
  return Number(declared) === bytes || Number(declared) === bytes + 3;
}

/**
 * Whether `text`, decoded by a body parser, holds U+FFFD: the parser writes it
 * for bytes that are not UTF-8 (iconv-lite, `querystring`), so the bytes sent
 * may not have been the text passed on. The endpoint refuses such bytes on
 * every other entry point (`-32700`); two bodies must not read as one.
 */
const mayBeReplaced = (text: string) => text.includes('\uFFFD');

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
 * re-serialized as JSON, `express.urlencoded()`'s as form text, a `Buffer` as
 * it is, a string as it is when its length is the body's `Content-Length`).
 * @returns `undefined`, or why the parsed value cannot be serialized again
 *   as it came (nested too deeply for `JSON.stringify`, a number out of range,
 *   a U+FFFD that may stand for bytes that were not UTF-8).
 */
function keepReadBody(req: ExpressRequest & { rawBody?: unknown }): Unkept | undefined {
  if (req.rawBody instanceof Buffer || !req.readableDidRead) return undefined;
  const body: unknown = req.body;
  if (body === undefined) {
    // Read by something that kept nothing of it: a body was sent, and is gone (helper-161 L4).
    const declared = req.headers['content-length'];
    const sent =
      declared === undefined ? req.headers['transfer-encoding'] !== undefined : declared !== '0';
    if (sent) return CONSUMED;
    req.rawBody = Buffer.alloc(0);
  } else if (Buffer.isBuffer(body)) req.rawBody = body;
  else if (typeof body === 'string') {
    if (mayBeReplaced(body)) return REPLACED;
    // The parser dropped one BOM; a second would be dropped by the endpoint, and no JSON read as JSON.
    if (body.startsWith('\uFEFF')) return TWO_BOMS;
    // A string a JSON parser decoded would be read as the request it spells (a parser differential).
    if (!isPostedText(req, body)) return STRING_NOT_AS_POSTED;
    req.rawBody = Buffer.from(body);
  } else if (
    req.is('application/x-www-form-urlencoded') &&
    body !== null &&
    typeof body === 'object'
  ) {
    // express.urlencoded() parsed it: the form a page handler (the approval page) reads. Nested
    // values are no form any more, and JSON text under a form's type would be read as one field
    // after another: refused. A U+FFFD is passed on: the page reads percent-escapes that are not
    // UTF-8 as U+FFFD on every entry point (URLSearchParams), so here it changes nothing.
    const text = formText(body);
    if (text === undefined) return NESTED_FORM;
    req.rawBody = Buffer.from(text);
  } else {
    let text: string;
    try {
      text = JSON.stringify(body, finiteOnly);
    } catch (error) {
      return error === OUT_OF_RANGE ? OUT_OF_RANGE : TOO_DEEP;
    }
    if (mayBeReplaced(text)) return REPLACED;
    req.rawBody = Buffer.from(text);
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
  /** The body's text as the parser decoded it (`entity.parse.failed`). */
  body?: unknown;
  /** Set by Node on what its zlib or a socket raised (`Z_DATA_ERROR`, `ECONNRESET`). */
  errno?: unknown;
}

/** A body parser's refusal answered without the endpoint's judge: [status, code, message]. */
type Refusal = [number, number, string];

const PARSER_ERRORS: Record<string, Refusal> = {
  'entity.parse.failed': [400, -32700, 'Parse error: body is not valid JSON'],
  'entity.too.large': [413, -32600, 'Request body too large'],
  'entity.verify.failed': [400, -32600, 'Invalid request body'],
  'encoding.unsupported': [415, -32600, 'Unsupported Content-Encoding'],
  // A charset the endpoint takes but the parser refused unread (`utf8`: express.json() takes `utf-*`).
  'charset.unsupported': [415, -32600, 'Unsupported charset: send charset=utf-8 or none'],
  'request.size.invalid': [400, -32600, 'Request body length does not match Content-Length'],
  'request.aborted': [400, -32600, 'Bad Request: the body was not received in full'],
  'parameters.too.many': [413, -32600, 'Request body has too many parameters'],
  'querystring.parse.rangeError': [400, -32600, 'Request body nested too deeply'],
};

/** Node's zlib or a socket failed while a body parser read the body: its message is not the client's. */
const UNREADABLE: Refusal = [400, -32600, 'Bad Request: the body could not be read'];

/** Refusals whose verdict belongs to the endpoint's rules on the request's headers and bytes. */
// `entity.too.large` too: a gzip body that inflates past the limit is refused for its coding (415), as on @mrtr/node.
const JUDGED = new Set([
  'entity.parse.failed',
  'charset.unsupported',
  'encoding.unsupported',
  'entity.too.large',
]);

/**
 * The endpoint's own rules for a body (media type, then charset and
 * `Content-Encoding`, then the JSON: `@mrtr/server` keeps them to itself),
 * for a body a parser refused before the endpoint could see it: an endpoint
 * without tools, asked with the refused request's `Content-Type`,
 * `Content-Encoding` and bytes. Made on first use.
 */
let judge: McpEndpoint | undefined;
const JUDGED_HEADERS = new Set(['content-type', 'content-encoding']);

/**
 * How the endpoint answers `req`'s headers with `body`: a 415 (media type,
 * charset, coding), or with `bodyVerdict` also a 400 (`-32700`, or `-32600`
 * for JSON that is no request object); `undefined` for any other answer.
 */
async function judged(
  req: ExpressRequest,
  body: string | Buffer,
  bodyVerdict: boolean,
): Promise<Response | undefined> {
  judge ??= createMcpEndpoint({
    serverInfo: { name: '@mrtr/express body judge', version: '0' },
    tools: [],
    maxBodyBytes: Number.MAX_SAFE_INTEGER, // the body is in memory already, within the parser's limit
    onError: () => {},
  });
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    // Repeated fields joined as `Headers.get` gives them to the endpoint on `@mrtr/node`.
    if (JUDGED_HEADERS.has(name)) headers.append(name, raw[i + 1] as string);
  }
  // A Buffer is a Uint8Array, which Request takes; TypeScript's DOM types want its ArrayBuffer named.
  const request = new Request('http://localhost/mcp', {
    method: 'POST',
    headers,
    body: body as BodyInit,
  });
  const answer = await judge(request, { principal: { id: 'mrtr-express-body-judge' } });
  if (answer.status === 415 || (bodyVerdict && answer.status === 400)) return answer;
  await answer.body?.cancel();
  return undefined;
}

/**
 * What the endpoint reads of a body a parser refused as invalid JSON: the
 * bytes kept by {@link keepRawBody}, else the parser's text when it is
 * exactly what was sent (text with U+FFFD may stand for bytes that were not
 * UTF-8, which the endpoint refuses as such: judged as no JSON at all).
 */
function refusedBody(
  req: ExpressRequest & { rawBody?: unknown },
  parsed: unknown,
): string | Buffer {
  if (req.rawBody instanceof Buffer) return req.rawBody;
  // The parser dropped one BOM: text that still starts with one had two, which is no JSON (a
  // second dropped by the endpoint would make it JSON again).
  return typeof parsed === 'string' && !parsed.includes('\uFFFD') && !parsed.startsWith('\uFEFF')
    ? parsed
    : '';
}

/** Send a JSON-RPC error without id. */
function refuse(res: ExpressResponse, [status, code, message]: Refusal): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message } });
}

/** The mapped refusal of a body parser's error `type`, if it is one of theirs. */
function knownRefusal(type: string | undefined): Refusal | undefined {
  return type !== undefined && Object.hasOwn(PARSER_ERRORS, type) ? PARSER_ERRORS[type] : undefined;
}

/**
 * Whether `error` is a body parser's refusal: a 4xx with one of the `type`s
 * of `body-parser` and `raw-body`, or a 400 with Node's `errno` (its zlib, or
 * a socket, failed while the parser read the body; `http-errors` made it 400).
 */
function fromBodyParser(error: BodyParserError): boolean {
  const { type, status, errno } = error;
  if (typeof status !== 'number' || status < 400 || status >= 500) return false;
  return knownRefusal(type) !== undefined || (status === 400 && typeof errno === 'number');
}

/**
 * Answer a body parser's refusal as the endpoint would answer the request:
 * its own 415 for the media type, charset or `Content-Encoding` (whatever
 * the parser made of the bytes: a `gzip` body that is no gzip included),
 * and for invalid JSON its verdict on the bytes (strict `express.json()`
 * refuses `"text"`, `42` and `null`, which are JSON: `-32600`, as for any
 * body that is no request object). Else the refusal as mapped; what Node
 * raised (zlib's `incorrect header check`) never reaches the client.
 */
async function answerParserError(
  req: ExpressRequest,
  res: ExpressResponse,
  error: BodyParserError,
): Promise<void> {
  const known = knownRefusal(error.type);
  if (known === undefined || JUDGED.has(error.type as string)) {
    const parseFailed = error.type === 'entity.parse.failed';
    const body = parseFailed ? refusedBody(req, error.body) : '';
    let answer: Response | undefined;
    try {
      answer = await judged(req, body, parseFailed);
    } catch {
      // Headers or a body no Request takes: the parser's own refusal, as mapped.
    }
    if (res.headersSent) return;
    if (answer) {
      const text = await answer.text();
      res.status(answer.status);
      // The endpoint's headers as it sent them (`Accept-Encoding: identity` with a 415), no charset added.
      answer.headers.forEach((value, name) => {
        res.setHeader(name, value);
      });
      res.end(text);
      return;
    }
  }
  refuse(res, known ?? UNREADABLE);
}

/** Options of {@link mcpErrorHandler}. */
export interface ExpressErrorHandlerOptions {
  /** Called with errors that are not a client's fault (default `console.error`). */
  onError?: (error: unknown) => void;
}

/**
 * An Express error handler for the MCP route, so that every answer there is
 * a JSON-RPC body. A body parser's refusal (`express.json()`) gets the
 * answer the endpoint gives the same request on `@mrtr/node`: a charset
 * other than UTF-8 or a `Content-Encoding` other than `identity` its 415
 * (with `Accept-Encoding: identity`), whatever the parser made of the bytes;
 * invalid JSON `-32700`, and JSON that is no object (`"text"`, `42`, `null`,
 * which strict `express.json()` refuses) `-32600`; too large 413 with
 * `-32600`. What Node raised while the parser read (zlib's messages) never
 * reaches the client. One refusal the endpoint would not make:
 * `express.json()` refuses `charset=utf8` (no hyphen) before reading, 415.
 * Another error with a 4xx `status` (`http-errors`, e.g. from an auth
 * middleware) keeps its status with `-32600` and its message; anything else
 * (a throwing `principal` included) is 500 with `-32603` and no detail, and
 * goes to `onError`. Mount it after the route: `app.use(path, mcpErrorHandler())`.
 */
export function mcpErrorHandler(options: ExpressErrorHandlerOptions = {}): ErrorRequestHandler {
  const onError = options.onError ?? ((e: unknown) => console.error('[mrtr] express error', e));
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const parsed = (error ?? {}) as BodyParserError & { message?: unknown };
    const { status, message } = parsed;
    if (fromBodyParser(parsed)) {
      answerParserError(req, res, parsed).catch(next);
    } else if (typeof status === 'number' && status >= 400 && status < 500) {
      const text = typeof message === 'string' ? message.slice(0, 200) : 'Invalid Request';
      res.status(status).json({ jsonrpc: '2.0', error: { code: -32600, message: text } });
    } else {
      onError(error);
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' } });
    }
  };
}
