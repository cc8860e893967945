import {
  bodyEncodingProblem,
  clip,
  decodeHeaderValue,
  ErrorCode,
  errorResponse,
  isRequestMeta,
  JSONRPCNotificationSchema,
  MCP_NAME_FIELD,
  MetaKey,
  missingRequiredMetaKeys,
  type RequestId,
  RequestMetaSchema,
  shownText,
} from '@mrtr/wire';
import { parse as parseMediaType } from 'content-type';
import { buildCatalog } from './catalog.js';
import { createRequestContext, RequestAbort } from './context.js';
import { dispatcher, quietly } from './dispatch.js';
import { envelopeProblem, idOf, legacyRequestedVersion, requestEnvelope } from './envelope.js';
import { type HttpExchange, type HttpReply, toResponse, webExchange } from './exchange.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  hostPolicy,
  notAllowedMessage,
  originPolicy,
  validHost,
} from './http.js';
import { DEFAULT_MAX_DEPTH, inspectParams } from './json-shape.js';
import { methodTable, SUPPORTED_PROTOCOL_VERSIONS } from './methods.js';
import { RATE_LIMITED, RateLimiter } from './rate-limit.js';
import { fail, ignore, json, jsonReply, mayStream, respond } from './respond.js';
import type { McpEndpoint, McpEndpointOptions, Principal } from './types.js';

export { SUPPORTED_PROTOCOL_VERSIONS } from './methods.js';

const SHAPE_PROBLEMS = {
  'too-deep': 'is nested too deeply',
  'ill-formed-unicode': 'is not well-formed Unicode (a lone surrogate)',
  'nul-in-meta': 'contains U+0000',
  'non-finite-number': 'is a number too large for JSON to carry back',
} as const;

/** Whether `params._meta` names a protocol version this endpoint serves (a modern request). */
function isModern(params: Record<string, unknown>): boolean {
  const meta = params._meta;
  if (meta === null || typeof meta !== 'object') return false;
  const version = (meta as Record<string, unknown>)[MetaKey.protocolVersion];
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly unknown[]).includes(version);
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive integer`);
  return value;
}

/**
 * Refuse cache hints the wire cannot carry: `CacheableResult.ttlMs` is an
 * integer ≥ 0 and `cacheScope` `"public"` or `"private"` (schema.json).
 * @throws Error naming the option.
 */
function checkCacheHints(options: McpEndpointOptions): void {
  for (const name of ['listTtlMs', 'readTtlMs'] as const) {
    const value = options[name];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0))
      throw new Error(`${name} must be a whole number of milliseconds ≥ 0`);
  }
  const scope = options.cacheScope;
  if (scope !== undefined && scope !== 'public' && scope !== 'private')
    throw new Error('cacheScope must be "public" or "private"');
}

/**
 * 413: the rest of the body is not read, so the connection cannot carry
 * another request (`Connection: close`, RFC 9112 §9.6).
 */
function tooLarge(): HttpReply {
  const body = errorResponse(undefined, ErrorCode.InvalidRequest, 'Request body too large');
  return json(413, body, { connection: 'close' });
}

/** The `-32022` a request of an unsupported version gets, naming the versions that are (`basic/versioning`). */
function unsupportedVersion(id: RequestId, requested: string, legacy: boolean): HttpReply {
  const supported: string[] = [...SUPPORTED_PROTOCOL_VERSIONS];
  const shown = shownText(requested, 64);
  const message = !legacy
    ? `Unsupported protocol version: ${shown}. Supported: ${supported.join(', ')}.`
    : `Unsupported protocol version: ${shown}. This server supports ${supported.join(', ')}, which has no initialize handshake: ${MODERN_ADVICE}.`;
  return fail(id, ErrorCode.UnsupportedProtocolVersion, message, { requested: shown, supported });
}

const MODERN_ADVICE = 'send each request with _meta and the MCP-Protocol-Version header';

/**
 * A handshake-era `initialize` (no modern `_meta`): `-32022` when it asks for a
 * version not served here; when it asks for one that is, or names none,
 * `-32601` (the method is gone in this revision, and `-32022` would call a
 * served version unsupported, or name one the client never asked for). Both
 * name the versions served, as `basic/versioning` asks of a modern-only server.
 */
function legacyInitialize(id: RequestId, requested: string | undefined): HttpReply {
  const supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
  if (requested !== undefined && !supported.includes(requested))
    return unsupportedVersion(id, requested, true);
  // 400, not the 404 of -32601: a client of the handshake era reads a 404 as its session gone and
  // initializes again; the Streamable HTTP binding rejects its request with 400.
  return fail(
    id,
    ErrorCode.MethodNotFound,
    `Method not found: initialize. This server speaks ${supported.join(', ')}, which has no initialize handshake: ${MODERN_ADVICE}.`,
    undefined,
    400,
  );
}

/**
 * Create a stateless MCP 2026-07-28 endpoint: one web-standard
 * `(Request, {principal?}) => Promise<Response>` serving Streamable HTTP
 * (`basic/transports/streamable-http`) with JSON responses, or an SSE stream
 * when a handler sends progress or log notifications.
 *
 * Enforced per request, in order, each refusal changing nothing:
 * `POST` only (405); `Host` one `host[:port]`, not two fields nor userinfo
 * (`-32600`, 400, RFC 9112 §3.2); `Host` and `Origin` allowed (403); a body no larger than
 * `maxBodyBytes` (413, before parsing); a principal from the adapter or
 * `authenticate` (401); `Content-Type: application/json` (415); JSON (`-32700`,
 * 400); one JSON-RPC request, with no `result` or `error` member (JSON-RPC 2.0
 * §4; `-32600`, 400, keeping a valid `id`; a valid notification gets 202)
 * and an `id` a client can read back (a string of well-formed Unicode, RFC
 * 8259 §8.2, or a safe integer; else `-32600`, 400, without `id`);
 * no `initialize` of the handshake era (2025-11-25 and before: no `_meta`
 * naming a served version; with or without headers, 400: `-32022` naming
 * the supported versions when it asks for one not served, else `-32601`
 * naming them; a modern `initialize` is an unknown method below);
 * `MCP-Protocol-Version` present and sent once (`-32020`) and supported (`-32022` with
 * `data.supported` and `data.requested`, 400); `Mcp-Method` equal to the body
 * (`-32020`); a served method (`-32601`, 404); `Mcp-Name` equal to
 * `params.name`/`params.uri`, Base64 sentinel decoded (`-32020`); `params`
 * no deeper than `maxDepth`, its strings well-formed Unicode and those of
 * `_meta` free of U+0000 (`-32602`, 400); `_meta` with
 * `protocolVersion` and `clientCapabilities` (`-32602`, 400, `data.missing`)
 * and of `RequestMetaSchema`'s shape (`-32602`, 400) whose version
 * equals the header (`-32020`); `Mcp-Param-*` headers equal to annotated
 * tool arguments (`-32020`); for `tools/call`, the principal within
 * `rateLimit` (429 with `Retry-After`, `RATE_LIMITED`), then the arguments
 * valid against the tool's `inputSchema` and `parse` (`-32602` naming the argument).
 *
 * The `-32602` of these checks on `params` (a name that is no string,
 * depth, Unicode, U+0000, numbers, `_meta`, the retry fields, an unknown
 * `cursor`) have `data: { path, problem? }`: `path` the member dotted from
 * the request (`params.name`, `params._meta.io.modelcontextprotocol/logLevel`,
 * `params.inputResponses.confirm`), `problem` the rule it breaks when one is
 * known. Those of the retry fields and other method params keep `param`
 * (`path` without `params.`) for clients that read it; tool arguments are
 * named by `data.argument`.
 *
 * Every result gets `resultType` (default `"complete"`) and
 * `_meta["io.modelcontextprotocol/serverInfo"]`; cacheable results get
 * `ttlMs` and `cacheScope`; an `InputRequiredResult` is sent only from
 * `tools/call`, `prompts/get` and `resources/read`, and only with input
 * requests the client declared (`-32021`). Handler errors become JSON-RPC
 * errors: an `McpError` of `@mrtr/wire` keeps its code; a database refusing
 * a value of the request (a SQLSTATE such as 22021 or 23505 on the error or its `cause`
 * chain) is `-32602` with `data.sqlstate`; a database or service that
 * cannot be reached (`serviceUnavailable` of `@mrtr/wire`: `ECONNREFUSED`
 * and other system errors of sockets, a SQLSTATE that ends the session) is
 * `-32603` saying so, HTTP 503; anything else (a throwing
 * `authenticate` included, or a result that cannot be serialized) is
 * `-32603` without detail, HTTP 500 with a JSON body. All go to `onError`.
 *
 * @throws Error at creation on a tool, prompt or resource defined twice, an
 *   invalid `x-mcp-header` annotation, an `inputSchema` that cannot be compiled,
 *   a `maxBodyBytes`, `maxDepth` or `rateLimit` that is not made of positive integers,
 *   a `listTtlMs` or `readTtlMs` that is not a whole number ≥ 0, or a `cacheScope`
 *   other than `"public"` and `"private"`.
 * @example
 * ```ts
 * import { type AnyToolDefinition, createMcpEndpoint } from '@mrtr/server';
 *
 * declare const notesDelete: AnyToolDefinition;
 * const token = process.env.MCP_TOKEN; // alice's bearer token, never a default
 * if (!token) throw new Error('set MCP_TOKEN (make one with `openssl rand -base64 32`)');
 * const tokens = new Map([[`Bearer ${token}`, { id: 'alice' }]]);
 * const endpoint = createMcpEndpoint({ serverInfo: { name: 'notes', version: '1.0.0' }, tools: [notesDelete],
 *   authenticate: (req) => tokens.get(req.headers.get('authorization') ?? '') });
 * const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
 *   authorization: `Bearer ${token}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' };
 * const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} });
 * const response = await endpoint(new Request('http://localhost/mcp', { method: 'POST', headers, body }));
 * ```
 */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const catalog = buildCatalog(options);
  const methods = methodTable(catalog, options);
  const hostAllowed = hostPolicy(options.allowedHosts);
  const originAllowed = originPolicy(options.allowedOrigins);
  const maxBody = positiveInteger('maxBodyBytes', options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  const maxDepth = positiveInteger('maxDepth', options.maxDepth ?? DEFAULT_MAX_DEPTH);
  checkCacheHints(options);
  const limiter = options.rateLimit ? new RateLimiter(options.rateLimit) : undefined;
  const logging = options.logging !== false;
  const onError = quietly(
    options.onError ?? ((e: unknown) => console.error('[mrtr] handler error', e)),
  );
  const run = dispatcher(methods, options, onError);

  async function handle(
    exchange: HttpExchange,
    adapterContext: { principal?: Principal },
  ): Promise<HttpReply> {
    if (exchange.method !== 'POST') {
      const body = errorResponse(
        undefined,
        ErrorCode.InvalidRequest,
        'Method not allowed: use POST',
      );
      return json(405, body, { allow: 'POST' });
    }
    const host = exchange.host();
    if (!validHost(host)) {
      const message = `Bad Request: Host must be one host[:port], got ${JSON.stringify(shownText(host, 200))}`;
      return fail(undefined, ErrorCode.InvalidRequest, message, undefined, 400);
    }
    if (!hostAllowed(host)) {
      const message = notAllowedMessage('Host', host, 'allowedHosts', !!options.allowedHosts);
      return fail(undefined, ErrorCode.InvalidRequest, message, undefined, 403);
    }
    const origin = exchange.header('origin');
    if (origin !== null && !originAllowed(origin)) {
      const message = notAllowedMessage(
        'Origin',
        origin,
        'allowedOrigins',
        !!options.allowedOrigins,
      );
      return fail(undefined, ErrorCode.InvalidRequest, message, undefined, 403);
    }
    const declared = exchange.header('content-length');
    if (declared !== null && Number(declared) > maxBody) {
      // Read and dropped within bounds (see readBody), so a client still sending reads the 413.
      await exchange.readBody(maxBody);
      return tooLarge();
    }
    let principal: Principal | undefined = adapterContext.principal;
    if (!principal && options.authenticate)
      principal = await options.authenticate(exchange.request);
    if (!principal) {
      const body = errorResponse(undefined, ErrorCode.InvalidRequest, 'Authentication required');
      return json(401, body, { 'www-authenticate': 'Bearer' });
    }
    // The media type exactly (RFC 9110 §8.3.1): `application/json-patch+json` is another type.
    const media = parseMediaType(exchange.header('content-type') ?? '');
    if (media.type !== 'application/json') {
      const message = 'Content-Type must be application/json';
      return fail(undefined, ErrorCode.InvalidRequest, message, undefined, 415);
    }
    const unreadable = bodyEncodingProblem(
      media.parameters.charset,
      exchange.header('content-encoding'),
    );
    if (unreadable)
      return json(415, errorResponse(undefined, ErrorCode.InvalidRequest, unreadable), {
        'accept-encoding': 'identity',
      });

    const read = await exchange.readBody(maxBody);
    if (!read.ok && read.reason === 'too-large') return tooLarge();
    let body: unknown;
    try {
      if (!read.ok) throw new Error(read.reason);
      body = JSON.parse(read.text);
    } catch {
      return fail(undefined, ErrorCode.ParseError, 'Parse error: body is not valid JSON');
    }
    if (Array.isArray(body))
      return fail(undefined, ErrorCode.InvalidRequest, 'Batch requests are not supported');
    if (body && typeof body === 'object' && !('id' in body) && 'method' in body) {
      // A notification: accepted with 202 and no body, or refused with 400. The schema lets
      // other members through; a `result` or `error` makes a response (JSON-RPC 2.0 §5), as for a request.
      if ('result' in body || 'error' in body)
        return fail(
          undefined,
          ErrorCode.InvalidRequest,
          'Invalid JSON-RPC notification: a notification has no result or error member (JSON-RPC 2.0 §4.1)',
        );
      if (JSONRPCNotificationSchema.safeParse(body).success)
        return { status: 202, headers: {}, body: null };
      return fail(undefined, ErrorCode.InvalidRequest, 'Invalid JSON-RPC notification');
    }
    const envelope = requestEnvelope(body);
    if (!envelope)
      return fail(
        idOf(body),
        ErrorCode.InvalidRequest,
        `Invalid JSON-RPC request: ${envelopeProblem(body)}`,
      );
    const { id, method, params } = envelope;

    const version = exchange.header('mcp-protocol-version');
    // A client of the handshake era (2025-11-25 and before), headers or not: tell it what is spoken
    // here. A modern request (its _meta names a version served here) for the removed method gets -32601.
    if (method === 'initialize' && !isModern(params))
      return legacyInitialize(id, legacyRequestedVersion(params, version));
    if (version === null)
      return fail(
        id,
        ErrorCode.HeaderMismatch,
        'Header mismatch: MCP-Protocol-Version header is required',
      );
    // Repeated fields arrive joined with ", " (RFC 9110 §5.3); no version holds a comma.
    if (version.includes(','))
      return fail(
        id,
        ErrorCode.HeaderMismatch,
        'Header mismatch: MCP-Protocol-Version must be sent once, with one version',
      );
    if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version))
      return unsupportedVersion(id, version, false);
    const methodHeader = exchange.header('mcp-method');
    if (methodHeader !== method) {
      const why =
        methodHeader === null
          ? 'is required'
          : sentTwice(methodHeader, (part) => part === method)
            ? 'must be sent once'
            : 'does not match the body method';
      return fail(id, ErrorCode.HeaderMismatch, `Header mismatch: Mcp-Method ${why}`);
    }
    if (!methods.has(method))
      return fail(id, ErrorCode.MethodNotFound, `Method not found: ${shownText(method, 64)}`);
    const nameField = MCP_NAME_FIELD[method];
    if (nameField) {
      // Not a header mismatch: no header can match a name that is not text.
      if (typeof params[nameField] !== 'string') {
        const message = `Invalid params: params.${nameField} must be a string`;
        return fail(id, ErrorCode.InvalidParams, message, { path: `params.${nameField}` }, 400);
      }
      const header = exchange.header('mcp-name');
      const decoded = header === null ? undefined : decodeHeaderValue(header);
      if (decoded === undefined || decoded !== params[nameField]) {
        const why =
          header === null
            ? 'is required'
            : sentTwice(header, (part) => decodeHeaderValue(part) === params[nameField])
              ? 'must be sent once'
              : decoded === undefined
                ? 'is not a valid value: =?base64?…?= must hold canonical Base64 of UTF-8 text, and a plain value visible ASCII'
                : `does not match params.${nameField}`;
        return fail(id, ErrorCode.HeaderMismatch, `Header mismatch: Mcp-Name ${why}`);
      }
    }
    const shape = inspectParams(params, maxDepth);
    if (shape) {
      // Lone surrogates of a key are shown as U+FFFD: the error itself is well-formed text.
      // Each key as shown (controls as U+FFFD), and the whole path bounded: a deep path of long keys
      // would otherwise come back several kilobytes long.
      const where = clip(['params', ...shape.path].map((k) => shownText(k, 64)).join('.'), 256);
      const message = `Invalid params: ${where} ${SHAPE_PROBLEMS[shape.problem]}`;
      return fail(
        id,
        ErrorCode.InvalidParams,
        message,
        { path: where, problem: shape.problem },
        400,
      );
    }
    const missing = missingRequiredMetaKeys(params._meta);
    if (missing.length > 0) {
      const message = `Invalid params: _meta lacks ${missing.join(' and ')}`;
      return fail(id, ErrorCode.InvalidParams, message, { path: 'params._meta', missing }, 400);
    }
    const meta = params._meta;
    if (!isRequestMeta(meta)) {
      const { where, path, problem } = metaProblem(meta);
      if (problem === undefined)
        return fail(
          id,
          ErrorCode.InvalidParams,
          `Invalid params: ${where} is malformed`,
          { path },
          400,
        );
      const message = `Invalid params: ${where}: ${problem}`;
      return fail(id, ErrorCode.InvalidParams, message, { path, problem }, 400);
    }
    if (meta[MetaKey.protocolVersion] !== version) {
      const message = 'Header mismatch: MCP-Protocol-Version does not match _meta protocolVersion';
      return fail(id, ErrorCode.HeaderMismatch, message);
    }
    if (limiter && method === 'tools/call') {
      const retryAfterMs = limiter.take(principal.id);
      if (retryAfterMs > 0) {
        const seconds = Math.ceil(retryAfterMs / 1000);
        const message = `Too many tool calls: retry after ${seconds} s`;
        return json(429, errorResponse(id, RATE_LIMITED, message, { retryAfterMs }), {
          'retry-after': String(seconds),
        });
      }
    }

    const abort = new RequestAbort(exchange);
    const input = { id, principal, meta, params, abort, logging };
    if (!mayStream(meta, logging, exchange.header('accept')))
      return jsonReply(await run(method, id, params, createRequestContext(input, ignore)));
    return await respond(abort, (emit) =>
      run(method, id, params, createRequestContext(input, emit)),
    );
  }

  async function serve(
    exchange: HttpExchange,
    adapterContext: { principal?: Principal } = {},
  ): Promise<HttpReply> {
    try {
      return await handle(exchange, adapterContext);
    } catch (error) {
      // `authenticate` threw, or a body stream broke in a way `readBody` did not foresee.
      onError(error);
      return fail(undefined, ErrorCode.InternalError, 'Internal error', undefined, 500);
    }
  }

  const endpoint: McpEndpoint = async (request, adapterContext = {}) =>
    toResponse(await serve(webExchange(request), adapterContext));
  endpoint.serve = serve;
  return endpoint;
}

/**
 * Whether a header value that did not match is that header sent more than
 * once: HTTP joins repeated fields with `, ` (RFC 9110 §5.3), so `a, a`
 * arrives for two fields of `a`. True when one of its comma-separated parts
 * matches on its own (only on this failure path).
 */
function sentTwice(value: string, matches: (part: string) => boolean): boolean {
  if (!value.includes(',')) return false;
  // As `value.split(/ *, */)`, which backtracked over every run of spaces: 16 KiB of them took
  // about 0.2 s a request. The spaces next to each comma go; those at the two ends stay.
  const parts = value.split(',');
  const last = parts.length - 1;
  return parts.some((part, i) => {
    let start = 0;
    let end = part.length;
    if (i > 0) while (start < end && part.charCodeAt(start) === 0x20) start++;
    if (i < last) while (end > start && part.charCodeAt(end - 1) === 0x20) end--;
    return matches(part.slice(start, end));
  });
}

/**
 * Which member of a malformed `_meta` is wrong and how, from the schema's
 * first issue (only on this failure path): `where`, `_meta.<key>…` dotted
 * for the message, `path`, the same from `params` (`params._meta.<key>…`)
 * for `data.path`, and `problem`, the schema's message (absent when it gave
 * no issue), each clipped and made well-formed so the error is readable text.
 */
function metaProblem(meta: unknown): { where: string; path: string; problem?: string } {
  const issue = RequestMetaSchema.safeParse(meta).error?.issues[0];
  if (!issue) return { where: '_meta', path: 'params._meta' };
  const keys = ['_meta', ...issue.path.map((k) => shownText(String(k), 64))];
  const where = clip(keys.join('.'), 256);
  const path = clip(['params', ...keys].join('.'), 256);
  return { where, path, problem: shownText(issue.message, 200) };
}
