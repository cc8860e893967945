import type {
  CallToolResult,
  ClientCapabilities,
  Implementation,
  InputRequiredResult,
  RequestId,
  RequestMeta,
  Tool,
} from '@mrtr/wire';

/** The authenticated caller, as the host application or framework knows it. */
export interface Principal {
  /** Stable id; what tickets bind and audit records name. */
  id: string;
  /** Anything else the application wants handlers to see (roles, tenant). */
  [key: string]: unknown;
}

/** What every request handler receives besides its parsed params. */
export interface RequestContext {
  /** The JSON-RPC id of this request. */
  requestId: RequestId;
  /** The authenticated principal. */
  principal: Principal;
  /** The request `_meta` as received. */
  meta: RequestMeta;
  /** `io.modelcontextprotocol/clientCapabilities` of this request; never of an earlier one. */
  capabilities: ClientCapabilities | undefined;
  /** `io.modelcontextprotocol/clientInfo`: self-reported, for logs only. */
  clientInfo: Implementation | undefined;
  /** `params.inputResponses` as received (unvalidated). */
  inputResponses: Record<string, unknown> | undefined;
  /** `params.requestState` as received: attacker-controlled. */
  requestState: string | undefined;
  /** The incoming HTTP request (headers, URL). */
  httpRequest: Request;
}

/** The context of a `tools/call`, shaped to be handed straight to `@mrtr/gate`. */
export interface ToolCallContext extends RequestContext {
  method: 'tools/call';
  /** The tool name. */
  name: string;
  /** The arguments as received (`{}` when absent). */
  arguments: Record<string, unknown>;
}

/**
 * A tool: its `tools/list` definition plus the handler of `tools/call`.
 * `parse` validates arguments (e.g. a zod schema's `parse`); a throw becomes
 * an `isError` result the model can read and correct.
 */
export interface ToolDefinition<Args = Record<string, unknown>> extends Tool {
  parse?(args: unknown): Args;
  handler(
    args: Args,
    context: ToolCallContext,
  ): Promise<CallToolResult | InputRequiredResult> | CallToolResult | InputRequiredResult;
}

/** A tool of any argument type, for lists of tools. */
export type AnyToolDefinition = ToolDefinition<unknown>;

/** Options of {@link createMcpEndpoint}. */
export interface McpEndpointOptions {
  /** Server identity, returned in `_meta["io.modelcontextprotocol/serverInfo"]`. */
  serverInfo: Implementation;
  /** Natural-language guidance for the model (`server/discover` `instructions`). */
  instructions?: string;
  /** Tools served by `tools/list` and `tools/call`. */
  tools?: AnyToolDefinition[];
  /**
   * Resolve the principal of a request (e.g. from a bearer token). Not
   * consulted when the adapter passes one. No principal means HTTP 401.
   */
  authenticate?: (request: Request) => Principal | undefined | Promise<Principal | undefined>;
  /**
   * Origins allowed to call (Streamable HTTP, "Security"). A request with any
   * other `Origin` gets 403. Default: loopback origins only
   * (`http(s)://localhost`, `127.0.0.1`, `[::1]`, any port). Requests without
   * `Origin` (non-browser clients) are not affected.
   */
  allowedOrigins?: readonly string[] | ((origin: string) => boolean);
  /** How long clients may cache `tools/list` and `server/discover`, milliseconds (default 60000). */
  listTtlMs?: number;
  /** Called with unexpected handler errors (default: `console.error`). */
  onError?: (error: unknown) => void;
}

/** A web-standard request handler: what every adapter mounts. */
export type McpEndpoint = (
  request: Request,
  context?: { principal?: Principal },
) => Promise<Response>;
