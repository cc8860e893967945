import {
  ErrorCode,
  errorResponse,
  isRequestMeta,
  JSONRPCNotificationSchema,
  McpError,
  MetaKey,
  missingRequiredMetaKeys,
  type RequestId,
} from '@mrtr/wire';
import { buildCatalog } from './catalog.js';
import { createRequestContext, RequestAbort } from './context.js';
import { decodeHeaderValue, NAMED_METHODS } from './headers.js';
import { DEFAULT_MAX_BODY_BYTES, hostPolicy, originPolicy, readBody, requestHost } from './http.js';
import { checkInputRequired, MRTR_METHODS } from './input-required.js';
import { methodTable, SUPPORTED_PROTOCOL_VERSIONS } from './methods.js';
import { fail, json, type Outcome, respond, statusFor } from './respond.js';
import type { McpEndpoint, McpEndpointOptions, Principal, RequestContext } from './types.js';

export { SUPPORTED_PROTOCOL_VERSIONS } from './methods.js';

/** Results that carry `ttlMs` and `cacheScope` (`CacheableResult`). */
const CACHEABLE = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

function idOf(body: unknown): RequestId | undefined {
  const raw = body && typeof body === 'object' ? (body as { id?: unknown }).id : undefined;
  return typeof raw === 'string' || (typeof raw === 'number' && Number.isSafeInteger(raw))
    ? raw
    : undefined;
}

/**
 * The members of a `JSONRPCRequest` (`JSONRPCRequestSchema` of `@mrtr/wire`:
 * `jsonrpc` "2.0", an integer or string `id`, a string `method`, `params` an
 * object when present), checked in place: a schema parse would copy the
 * whole body on every request.
 */
function requestEnvelope(
  body: unknown,
): { id: RequestId; method: string; params: Record<string, unknown> } | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const { jsonrpc, id, method, params } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0' || typeof method !== 'string') return undefined;
  // A safe integer, as zod's int(): a larger id would not survive the round trip to the client.
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id)))
    return undefined;
  if (params === undefined) return { id, method, params: {} };
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return undefined;
  return { id, method, params: params as Record<string, unknown> };
}

/**
 * Create a stateless MCP 2026-07-28 endpoint: one web-standard
 * `(Request, {principal?}) => Promise<Response>` serving Streamable HTTP
 * (`basic/transports/streamable-http`) with JSON responses, or an SSE stream
 * when a handler sends progress or log notifications.
 *
 * Enforced per request, in order, each refusal changing nothing:
 * `POST` only (405); `Host` and `Origin` allowed (403); a body no larger than
 * `maxBodyBytes` (413, before parsing); a principal from the adapter or
 * `authenticate` (401); `Content-Type: application/json` (415); JSON (`-32700`,
 * 400); one JSON-RPC request (`-32600`, 400; a valid notification gets 202);
 * `MCP-Protocol-Version` present (`-32020`) and supported (`-32022` with
 * `data.supported` and `data.requested`, 400); `Mcp-Method` equal to the body
 * (`-32020`); a served method (`-32601`, 404); `Mcp-Name` equal to
 * `params.name`/`params.uri`, Base64 sentinel decoded (`-32020`); `_meta` with
 * `protocolVersion` and `clientCapabilities` (`-32602`, 400) whose version
 * equals the header (`-32020`); `Mcp-Param-*` headers equal to annotated
 * tool arguments (`-32020`).
 *
 * Every result gets `resultType` (default `"complete"`) and
 * `_meta["io.modelcontextprotocol/serverInfo"]`; cacheable results get
 * `ttlMs` and `cacheScope`; an `InputRequiredResult` is sent only from
 * `tools/call`, `prompts/get` and `resources/read`, and only with input
 * requests the client declared (`-32021`). Handler errors become JSON-RPC
 * errors: an {@link McpError} keeps its code, anything else is `-32603`
 * without detail.
 *
 * @throws Error at creation on a tool, prompt or resource defined twice, an
 *   invalid `x-mcp-header` annotation, or a `maxBodyBytes` that is not a positive integer.
 * @example
 * ```ts
 * const endpoint = createMcpEndpoint({ serverInfo: { name: 'notes', version: '1.0.0' }, tools: [notesDelete],
 *   authenticate: (req) => tokens.get(req.headers.get('authorization') ?? '') });
 * const response = await endpoint(new Request('http://localhost/mcp', { method: 'POST', headers, body }));
 * ```
 */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const catalog = buildCatalog(options);
  const methods = methodTable(catalog, options);
  const hostAllowed = hostPolicy(options.allowedHosts);
  const originAllowed = originPolicy(options.allowedOrigins);
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBody) || maxBody <= 0)
    throw new Error('maxBodyBytes must be a positive integer');
  const onError = options.onError ?? ((e: unknown) => console.error('[mrtr] handler error', e));
  const serverMeta =
    options.includeServerInfo === false ? {} : { [MetaKey.serverInfo]: options.serverInfo };

  /** Shape a handler's result for the wire; throws on what must never be sent. */
  function finish(method: string, result: unknown, context: RequestContext) {
    if (result === null || typeof result !== 'object' || Array.isArray(result))
      throw new Error(`${method} handler returned ${result === null ? 'null' : typeof result}`);
    const out: Record<string, unknown> = { ...result };
    out.resultType ??= 'complete';
    if (out.resultType === 'input_required') {
      if (!MRTR_METHODS.has(method)) throw new Error(`${method} may not answer input_required`);
      checkInputRequired(out as never, context.capabilities);
    } else if (CACHEABLE.has(method)) {
      out.ttlMs ??=
        method === 'resources/read' ? (options.readTtlMs ?? 0) : (options.listTtlMs ?? 60_000);
      out.cacheScope ??= options.cacheScope ?? 'private';
    }
    const meta = out._meta && typeof out._meta === 'object' ? out._meta : {};
    if (Object.keys(serverMeta).length > 0 || out._meta !== undefined)
      out._meta = { ...meta, ...serverMeta };
    return out;
  }

  async function run(
    method: string,
    id: RequestId,
    params: Record<string, unknown>,
    context: RequestContext,
  ): Promise<Outcome> {
    try {
      const handler = methods.get(method);
      if (!handler) throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
      const result = finish(method, await handler(params, context), context);
      return { status: 200, body: { jsonrpc: '2.0', id, result } };
    } catch (error) {
      if (error instanceof McpError) {
        const body = errorResponse(id, error.code, error.message, error.data);
        return { status: statusFor(error.code), body };
      }
      onError(error);
      return { status: 500, body: errorResponse(id, ErrorCode.InternalError, 'Internal error') };
    }
  }

  return async function endpoint(request, adapterContext = {}) {
    if (request.method !== 'POST') {
      const body = errorResponse(
        undefined,
        ErrorCode.InvalidRequest,
        'Method not allowed: use POST',
      );
      return json(405, body, { allow: 'POST' });
    }
    if (!hostAllowed(requestHost(request)))
      return fail(undefined, ErrorCode.InvalidRequest, 'Host not allowed', undefined, 403);
    const origin = request.headers.get('origin');
    if (origin !== null && !originAllowed(origin))
      return fail(undefined, ErrorCode.InvalidRequest, 'Origin not allowed', undefined, 403);
    const declared = request.headers.get('content-length');
    if (declared !== null && Number(declared) > maxBody)
      return fail(undefined, ErrorCode.InvalidRequest, 'Request body too large', undefined, 413);
    let principal: Principal | undefined = adapterContext.principal;
    if (!principal && options.authenticate) principal = await options.authenticate(request);
    if (!principal) {
      const body = errorResponse(undefined, ErrorCode.InvalidRequest, 'Authentication required');
      return json(401, body, { 'www-authenticate': 'Bearer' });
    }
    if (!/^application\/json\b/i.test(request.headers.get('content-type') ?? '')) {
      const message = 'Content-Type must be application/json';
      return fail(undefined, ErrorCode.InvalidRequest, message, undefined, 415);
    }

    const read = await readBody(request, maxBody);
    if (!read.ok && read.reason === 'too-large')
      return fail(undefined, ErrorCode.InvalidRequest, 'Request body too large', undefined, 413);
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
      // A notification: accepted with 202 and no body, or refused with 400.
      if (JSONRPCNotificationSchema.safeParse(body).success)
        return new Response(null, { status: 202 });
      return fail(undefined, ErrorCode.InvalidRequest, 'Invalid JSON-RPC notification');
    }
    const envelope = requestEnvelope(body);
    if (!envelope) return fail(idOf(body), ErrorCode.InvalidRequest, 'Invalid JSON-RPC request');
    const { id, method, params } = envelope;

    const version = request.headers.get('mcp-protocol-version');
    if (version === null)
      return fail(
        id,
        ErrorCode.HeaderMismatch,
        'Header mismatch: MCP-Protocol-Version header is required',
      );
    if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
      return fail(
        id,
        ErrorCode.UnsupportedProtocolVersion,
        `Unsupported protocol version: ${version}`,
        {
          requested: version,
          supported: [...SUPPORTED_PROTOCOL_VERSIONS],
        },
      );
    }
    const methodHeader = request.headers.get('mcp-method');
    if (methodHeader !== method) {
      const why = methodHeader === null ? 'is required' : 'does not match the body method';
      return fail(id, ErrorCode.HeaderMismatch, `Header mismatch: Mcp-Method ${why}`);
    }
    if (!methods.has(method))
      return fail(id, ErrorCode.MethodNotFound, `Method not found: ${method}`);
    const nameField = NAMED_METHODS[method];
    if (nameField) {
      const header = request.headers.get('mcp-name');
      const decoded = header === null ? undefined : decodeHeaderValue(header);
      if (decoded === undefined || decoded !== params[nameField]) {
        const why = header === null ? 'is required' : `does not match params.${nameField}`;
        return fail(id, ErrorCode.HeaderMismatch, `Header mismatch: Mcp-Name ${why}`);
      }
    }
    const missing = missingRequiredMetaKeys(params._meta);
    if (missing.length > 0) {
      const message = `Invalid params: _meta lacks ${missing.join(' and ')}`;
      return fail(id, ErrorCode.InvalidParams, message, { missing }, 400);
    }
    const meta = params._meta;
    if (!isRequestMeta(meta))
      return fail(id, ErrorCode.InvalidParams, 'Invalid params: malformed _meta', undefined, 400);
    if (meta[MetaKey.protocolVersion] !== version) {
      const message = 'Header mismatch: MCP-Protocol-Version does not match _meta protocolVersion';
      return fail(id, ErrorCode.HeaderMismatch, message);
    }

    const accept = request.headers.get('accept') ?? '';
    const abort = new RequestAbort(request);
    return respond(/text\/event-stream/i.test(accept), abort, (emit) => {
      const input = { id, principal, meta, params, request, abort };
      return run(method, id, params, createRequestContext(input, emit));
    });
  };
}
