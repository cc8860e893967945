import {
  CallToolRequestParamsSchema,
  type CallToolResult,
  type ClientCapabilities,
  type DiscoverResult,
  ErrorCode,
  errorResponse,
  type InputRequiredResult,
  JSONRPCRequestSchema,
  type ListToolsResult,
  McpError,
  MetaKey,
  PROTOCOL_VERSION,
  type RequestId,
  type RequestMeta,
  RequestMetaSchema,
  supportsFormElicitation,
  supportsUrlElicitation,
  textResult,
} from '@mrtr/wire';
import { decodeHeaderValue, NAMED_METHODS } from './headers.js';
import type {
  AnyToolDefinition,
  McpEndpoint,
  McpEndpointOptions,
  Principal,
  RequestContext,
  ToolCallContext,
} from './types.js';

/** Protocol versions this endpoint implements. */
export const SUPPORTED_PROTOCOL_VERSIONS = [PROTOCOL_VERSION] as const;

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
const LOOPBACK = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** HTTP status for a JSON-RPC error code (Streamable HTTP: 400 for header, version and capability errors, 404 for unknown methods). */
function statusFor(code: number): number {
  switch (code) {
    case ErrorCode.ParseError:
    case ErrorCode.InvalidRequest:
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.UnsupportedProtocolVersion:
      return 400;
    case ErrorCode.MethodNotFound:
      return 404;
    case ErrorCode.InternalError:
      return 500;
    default:
      return 200;
  }
}

function fail(id: RequestId | undefined, code: number, message: string, data?: unknown): Response {
  return json(statusFor(code), errorResponse(id, code, message, data));
}

/**
 * Refuse an `InputRequiredResult` that embeds a request this client did not
 * declare (MRTR "Server Requirements": servers MUST NOT send undeclared input
 * requests), or that carries neither `inputRequests` nor `requestState`.
 */
function checkInputRequired(
  result: InputRequiredResult,
  caps: ClientCapabilities | undefined,
): void {
  if (result.inputRequests === undefined && result.requestState === undefined) {
    throw new McpError(
      ErrorCode.InternalError,
      'input_required result without inputRequests or requestState',
    );
  }
  for (const request of Object.values(result.inputRequests ?? {})) {
    if (request.method === 'elicitation/create') {
      const url = request.params.mode === 'url';
      const ok = url ? supportsUrlElicitation(caps) : supportsFormElicitation(caps);
      if (!ok) {
        const required = url ? { elicitation: { url: {} } } : { elicitation: { form: {} } };
        throw new McpError(
          ErrorCode.MissingRequiredClientCapability,
          `This request needs ${url ? 'URL' : 'form'} elicitation, which the client did not declare`,
          { requiredCapabilities: required },
        );
      }
    } else if (request.method === 'sampling/createMessage' && caps?.sampling === undefined) {
      throw new McpError(ErrorCode.MissingRequiredClientCapability, 'This request needs sampling', {
        requiredCapabilities: { sampling: {} },
      });
    } else if (request.method === 'roots/list' && caps?.roots === undefined) {
      throw new McpError(ErrorCode.MissingRequiredClientCapability, 'This request needs roots', {
        requiredCapabilities: { roots: {} },
      });
    }
  }
}

/**
 * Create a stateless MCP 2026-07-28 endpoint: one web-standard
 * `(Request, {principal?}) => Promise<Response>` serving `server/discover`,
 * `tools/list` and `tools/call` over Streamable HTTP with JSON responses.
 *
 * Enforced per request, in order: `POST` only (else 405); `Origin`
 * (else 403); a principal from the adapter or `authenticate` (else 401);
 * `Content-Type: application/json` (else 415); a single JSON-RPC request
 * (else 400 with `-32700`/`-32600`; a notification gets 202);
 * `MCP-Protocol-Version` present (`-32020`) and supported (`-32022`) and
 * equal to `_meta["io.modelcontextprotocol/protocolVersion"]`; `Mcp-Method`
 * and `Mcp-Name` equal to the body (`-32020`, 400); a known method (`-32601`, 404).
 * Handler errors become JSON-RPC errors; an {@link McpError} keeps its code.
 *
 * @example
 * ```ts
 * const endpoint = createMcpEndpoint({ serverInfo: { name: 'notes', version: '1.0.0' }, tools: [notesDelete],
 *   authenticate: (req) => tokens.get(req.headers.get('authorization') ?? '') });
 * const response = await endpoint(new Request('http://localhost/mcp', { method: 'POST', headers, body }));
 * ```
 */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const tools = new Map<string, AnyToolDefinition>();
  for (const tool of options.tools ?? []) {
    if (tools.has(tool.name)) throw new Error(`tool ${tool.name} is defined twice`);
    tools.set(tool.name, tool);
  }
  const ttlMs = options.listTtlMs ?? 60_000;
  const onError = options.onError ?? ((e: unknown) => console.error('[mrtr] handler error', e));
  const allowed = options.allowedOrigins;
  const originAllowed = (origin: string): boolean =>
    typeof allowed === 'function'
      ? allowed(origin)
      : allowed
        ? allowed.includes(origin)
        : LOOPBACK.test(origin);
  const serverMeta = { 'io.modelcontextprotocol/serverInfo': options.serverInfo };

  const toolList = (): ListToolsResult => ({
    resultType: 'complete',
    tools: [...tools.values()].map(({ handler: _h, parse: _p, ...definition }) => definition),
    ttlMs,
    cacheScope: 'private',
  });

  const discover = (): DiscoverResult & { _meta: typeof serverMeta } => {
    const result: DiscoverResult & { _meta: typeof serverMeta } = {
      resultType: 'complete',
      supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
      capabilities: { tools: {} },
      ttlMs,
      cacheScope: 'private',
      _meta: serverMeta,
    };
    if (options.instructions) result.instructions = options.instructions;
    return result;
  };

  async function callTool(context: RequestContext, params: Record<string, unknown>) {
    const parsed = CallToolRequestParamsSchema.safeParse(params);
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, 'Invalid tools/call params');
    const tool = tools.get(parsed.data.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${parsed.data.name}`);
    const rawArgs = parsed.data.arguments ?? {};
    let args: unknown = rawArgs;
    if (tool.parse) {
      try {
        args = tool.parse(rawArgs);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        return textResult(`Invalid arguments for ${tool.name}: ${detail}`, { isError: true });
      }
    }
    const ctx: ToolCallContext = {
      ...context,
      method: 'tools/call',
      name: tool.name,
      arguments: rawArgs,
    };
    const result: CallToolResult | InputRequiredResult = await tool.handler(args, ctx);
    if (result.resultType === 'input_required') checkInputRequired(result, context.capabilities);
    return result;
  }

  return async function endpoint(request, context = {}) {
    if (request.method !== 'POST') {
      return json(
        405,
        errorResponse(undefined, ErrorCode.InvalidRequest, 'Method not allowed: use POST'),
        {
          allow: 'POST',
        },
      );
    }
    const origin = request.headers.get('origin');
    if (origin !== null && !originAllowed(origin)) {
      return json(403, errorResponse(undefined, ErrorCode.InvalidRequest, 'Origin not allowed'));
    }
    let principal: Principal | undefined = context.principal;
    if (!principal && options.authenticate) principal = await options.authenticate(request);
    if (!principal) {
      return json(
        401,
        errorResponse(undefined, ErrorCode.InvalidRequest, 'Authentication required'),
        {
          'www-authenticate': 'Bearer',
        },
      );
    }
    const contentType = request.headers.get('content-type') ?? '';
    if (!/^application\/json\b/i.test(contentType)) {
      return json(
        415,
        errorResponse(undefined, ErrorCode.InvalidRequest, 'Content-Type must be application/json'),
      );
    }

    let body: unknown;
    try {
      body = JSON.parse(await request.text());
    } catch {
      return fail(undefined, ErrorCode.ParseError, 'Parse error: body is not valid JSON');
    }
    const rawId =
      body && typeof body === 'object' && 'id' in body ? (body as { id: unknown }).id : undefined;
    const idOf =
      typeof rawId === 'string' || (typeof rawId === 'number' && Number.isInteger(rawId))
        ? rawId
        : undefined;
    if (
      body &&
      typeof body === 'object' &&
      !Array.isArray(body) &&
      !('id' in body) &&
      'method' in body
    ) {
      return new Response(null, { status: 202 }); // a notification: accepted, nothing to answer
    }
    const envelope = JSONRPCRequestSchema.safeParse(body);
    if (!envelope.success) return fail(idOf, ErrorCode.InvalidRequest, 'Invalid JSON-RPC request');
    const { id, method } = envelope.data;
    const params = envelope.data.params ?? {};

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
    const metaParsed = RequestMetaSchema.safeParse(params._meta ?? {});
    if (!metaParsed.success) return fail(id, ErrorCode.InvalidParams, 'Invalid _meta');
    const meta: RequestMeta = metaParsed.data;
    if (meta[MetaKey.protocolVersion] !== version) {
      return fail(
        id,
        ErrorCode.HeaderMismatch,
        'Header mismatch: MCP-Protocol-Version does not match _meta protocolVersion',
      );
    }
    if (request.headers.get('mcp-method') !== method) {
      return fail(
        id,
        ErrorCode.HeaderMismatch,
        'Header mismatch: Mcp-Method does not match the body method',
      );
    }
    const nameField = NAMED_METHODS[method];
    if (nameField) {
      const header = request.headers.get('mcp-name');
      const decoded = header === null ? undefined : decodeHeaderValue(header);
      if (decoded === undefined || decoded !== params[nameField]) {
        return fail(
          id,
          ErrorCode.HeaderMismatch,
          `Header mismatch: Mcp-Name does not match params.${nameField}`,
        );
      }
    }

    const requestContext: RequestContext = {
      requestId: id,
      principal,
      meta,
      capabilities: meta[MetaKey.clientCapabilities],
      clientInfo: meta[MetaKey.clientInfo],
      inputResponses:
        params.inputResponses && typeof params.inputResponses === 'object'
          ? (params.inputResponses as Record<string, unknown>)
          : undefined,
      requestState: typeof params.requestState === 'string' ? params.requestState : undefined,
      httpRequest: request,
    };

    try {
      let result: unknown;
      switch (method) {
        case 'server/discover':
          result = discover();
          break;
        case 'tools/list':
          result = toolList();
          break;
        case 'tools/call':
          result = await callTool(requestContext, params);
          break;
        case 'ping':
          result = { resultType: 'complete' };
          break;
        default:
          return fail(id, ErrorCode.MethodNotFound, `Method not found: ${method}`);
      }
      return json(200, { jsonrpc: '2.0', id, result });
    } catch (error) {
      if (error instanceof McpError) return fail(id, error.code, error.message, error.data);
      onError(error);
      return fail(id, ErrorCode.InternalError, 'Internal error');
    }
  };
}
