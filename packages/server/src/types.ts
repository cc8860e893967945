import type {
  CacheScope,
  CallToolResult,
  ClientCapabilities,
  CompleteRequestParams,
  CompleteResult,
  GetPromptResult,
  Implementation,
  InputRequiredResult,
  LoggingLevel,
  Prompt,
  RequestId,
  RequestMeta,
  Resource,
  ResourceContents,
  ResourceTemplate,
  Tool,
} from '@mrtr/wire';
import type { HttpExchange, HttpReply } from './exchange.js';
import type { RateLimitOptions } from './rate-limit.js';

/** The authenticated caller, as the host application or framework knows it. */
export interface Principal {
  /**
   * Stable id; what tickets bind and audit records name, and nothing else of
   * the principal: unique across tenants (`acme:admin`, not `admin` in each).
   */
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
  /** The request `_meta` as received (its required keys are present). */
  meta: RequestMeta;
  /** `io.modelcontextprotocol/clientCapabilities` of this request; never of an earlier one. */
  capabilities: ClientCapabilities | undefined;
  /** `io.modelcontextprotocol/clientInfo`: self-reported, for logs only. */
  clientInfo: Implementation | undefined;
  /** `params.inputResponses` as received: each value a JSON object, otherwise unvalidated. */
  inputResponses: Record<string, unknown> | undefined;
  /** `params.requestState` as received: attacker-controlled. */
  requestState: string | undefined;
  /** The incoming HTTP request (headers, URL). */
  httpRequest: Request;
  /**
   * Aborted when the client closes the response stream, which on Streamable
   * HTTP is the cancellation of this request (`basic/transports/streamable-http`, "Cancellation").
   */
  signal: AbortSignal;
  /**
   * Send `notifications/progress` for this request (`progress` and `total` in
   * the tool's own units). A no-op unless the request carried
   * `_meta.progressToken` and accepts `text/event-stream`; the first call turns
   * the response into an SSE stream.
   */
  progress(progress: number, total?: number, message?: string): void;
  /**
   * Send `notifications/message` at `level`. A no-op unless the request set
   * `_meta["io.modelcontextprotocol/logLevel"]` at or below `level` (absent: never).
   */
  log(level: LoggingLevel, data: unknown, logger?: string): void;
}

/** The context of a `tools/call`, shaped to be handed straight to `@mrtr/gate`. */
export interface ToolCallContext extends RequestContext {
  method: 'tools/call';
  /** The tool name. */
  name: string;
  /**
   * The validated arguments, the same the handler gets: what `parse` returned
   * when it returned a plain object, else the arguments as received (`{}`
   * when absent) once they matched the tool's `inputSchema`. A gate digests
   * and audits these.
   */
  arguments: Record<string, unknown>;
}

/** The context of a `prompts/get`, shaped like {@link ToolCallContext} for `@mrtr/gate`. */
export interface PromptGetContext extends RequestContext {
  method: 'prompts/get';
  /** The prompt name. */
  name: string;
  /** The prompt arguments as received (`{}` when absent). */
  arguments: Record<string, string>;
}

/** The context of a `resources/read`; `name` is the URI, `arguments` the template variables. */
export interface ResourceReadContext extends RequestContext {
  method: 'resources/read';
  /** The URI read (also in `name`, so a gate binds it like a tool name). */
  uri: string;
  name: string;
  /** For a template, its variables (`{id}` → `"123"`); `{}` for a direct resource. */
  arguments: Record<string, string>;
}

/** What a handler may return for any method that allows MRTR. */
type Awaitable<T> = T | Promise<T>;

/**
 * A tool: its `tools/list` definition plus the handler of `tools/call`.
 * Arguments are checked, in this order, before the handler runs: against
 * `inputSchema` (JSON Schema 2020-12, or draft-07 when its `$schema` says so;
 * `additionalProperties: false` refuses undeclared arguments), then by
 * `parse` when present (e.g. a zod schema's `parse`, for rules a schema
 * cannot say). Either refusal is JSON-RPC `-32602` naming the argument (a zod
 * error's first issue path), never quoting its value. Properties of
 * `inputSchema` annotated with `x-mcp-header` are checked against their
 * `Mcp-Param-{name}` header (`server/tools`, "x-mcp-header").
 */
export interface ToolDefinition<Args = Record<string, unknown>> extends Tool {
  parse?(args: unknown): Args;
  handler(args: Args, context: ToolCallContext): Awaitable<CallToolResult | InputRequiredResult>;
}

/** A tool of any argument type, for lists of tools. */
export type AnyToolDefinition = ToolDefinition<unknown>;

/**
 * A prompt: its `prompts/list` definition plus the handler of `prompts/get`.
 * Arguments marked `required` are checked before the handler runs (`-32602`).
 */
export interface PromptDefinition extends Prompt {
  handler(
    args: Record<string, string>,
    context: PromptGetContext,
  ): Awaitable<GetPromptResult | InputRequiredResult>;
}

/**
 * What a resource read produces: the contents, and optionally its own caching
 * hints (`ttlMs` milliseconds, `cacheScope`); the endpoint's defaults fill the rest.
 */
export interface ReadResourceOutcome {
  resultType: 'complete';
  contents: ResourceContents[];
  ttlMs?: number;
  cacheScope?: CacheScope;
  _meta?: Record<string, unknown>;
}

/** A directly readable resource: its `resources/list` entry plus its reader. */
export interface ResourceDefinition extends Resource {
  read(context: ResourceReadContext): Awaitable<ReadResourceOutcome | InputRequiredResult>;
}

/**
 * A resource template (RFC 6570 level 1: `{name}` matches one path segment,
 * no `/`): its `resources/templates/list` entry plus its reader. `read`
 * returning `undefined` means no such resource (`-32602` with `data.uri`).
 */
export interface ResourceTemplateDefinition extends ResourceTemplate {
  read(
    variables: Record<string, string>,
    context: ResourceReadContext,
  ): Awaitable<ReadResourceOutcome | InputRequiredResult | undefined>;
}

/** Options of {@link createMcpEndpoint}. */
export interface McpEndpointOptions {
  /** Server identity, returned in every result's `_meta["io.modelcontextprotocol/serverInfo"]` as it was when the endpoint was created. */
  serverInfo: Implementation;
  /** Leave `serverInfo` out of result `_meta` (it is a SHOULD; default `true`: included). */
  includeServerInfo?: boolean;
  /** Natural-language guidance for the model (`server/discover` `instructions`). */
  instructions?: string;
  /** Tools served by `tools/list` and `tools/call`; absent: no `tools` capability (`-32601`). */
  tools?: AnyToolDefinition[];
  /** Prompts served by `prompts/list` and `prompts/get`; absent: no `prompts` capability. */
  prompts?: PromptDefinition[];
  /** Resources served by `resources/list` and `resources/read`. */
  resources?: ResourceDefinition[];
  /** Resource templates served by `resources/templates/list` and `resources/read`. */
  resourceTemplates?: ResourceTemplateDefinition[];
  /** `completion/complete`; present: the `completions` capability is declared. */
  complete?: (params: CompleteRequestParams, context: RequestContext) => Awaitable<CompleteResult>;
  /**
   * Resolve the principal of a request (e.g. from a bearer token). Not
   * consulted when the adapter passes one. No principal means HTTP 401.
   */
  authenticate?: (request: Request) => Principal | undefined | Promise<Principal | undefined>;
  /**
   * Origins allowed to call (Streamable HTTP, "Security & Endpoint"). A
   * request with any other `Origin` gets 403. Default: loopback origins only
   * (`http(s)://localhost`, `127.0.0.1`, `[::1]`, any port). Requests without
   * `Origin` (non-browser clients) are not affected.
   */
  allowedOrigins?: readonly string[] | ((origin: string) => boolean);
  /**
   * Values of the `Host` header allowed to call, as hostnames (`example.com`,
   * any port) or `host:port`; other hosts get 403, against DNS rebinding.
   * Default: `localhost`, `127.0.0.1` and `[::1]` on any port. A server reached
   * under any other name must list it here.
   */
  allowedHosts?: readonly string[] | ((host: string) => boolean);
  /** Largest request body accepted, bytes (default 1 MiB); larger gets 413 before any parsing. */
  maxBodyBytes?: number;
  /**
   * Deepest nesting of objects and arrays in `params` (`params` itself is 1;
   * default 64); deeper gets `-32602` (HTTP 400) before any handler runs.
   */
  maxDepth?: number;
  /**
   * Per-principal limit of `tools/call` (`server/tools`, "Security
   * Considerations": servers MUST rate limit tool invocations), e.g.
   * `{ limit: 60, windowMs: 60_000 }`. Over it: HTTP 429, `Retry-After`
   * (seconds) and JSON-RPC error `RATE_LIMITED` (`-31429`) with
   * `data.retryAfterMs`. Default `false` (none): set it here, or limit in a
   * gateway in front.
   */
  rateLimit?: RateLimitOptions | false;
  /**
   * Whether handlers may send `notifications/message` (`context.log`), and so
   * whether `server/discover` declares the `logging` capability. Default `true`.
   */
  logging?: boolean;
  /** `ttlMs` of `server/discover` and the four list results, milliseconds (default 60000). */
  listTtlMs?: number;
  /** `ttlMs` of a `resources/read` result that sets none, milliseconds (default 0: stale at once). */
  readTtlMs?: number;
  /** `cacheScope` of cacheable results that set none (default `"private"`). */
  cacheScope?: CacheScope;
  /**
   * Called with unexpected handler errors, and with every `McpError` of code
   * `-32603` a handler throws (its `cause` says what failed: an unreachable
   * replay store, an audit sink). Default: `console.error`.
   */
  onError?: (error: unknown) => void;
}

/** A web-standard request handler: what every adapter mounts. */
export interface McpEndpoint {
  (request: Request, context?: { principal?: Principal }): Promise<Response>;
  /**
   * The same endpoint for an adapter that reads its runtime's request itself
   * (`@mrtr/node`): every check and handler of the call above, read through
   * `exchange` and answered as an {@link HttpReply} the adapter writes, with
   * no web `Request` or `Response` built unless something asks for one.
   * Never rejects (an unexpected error is a 500 reply). Absent on an
   * endpoint not made by `createMcpEndpoint`; adapters then use the call.
   */
  serve?: (exchange: HttpExchange, context?: { principal?: Principal }) => Promise<HttpReply>;
}
