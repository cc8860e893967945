import {
  type ClientCapabilities,
  type Implementation,
  MetaKey,
  PROTOCOL_VERSION,
} from '@mrtr/wire';
import type { Answerer, AskingRequest, ServerIdentity } from './answerer.js';
import {
  AbortedError,
  McpClientError,
  ProtocolError,
  RoundLimitError,
  TransportError,
} from './errors.js';
import type { AutoDeclined, ClientEvent } from './events.js';
import { type HeaderAnnotation, paramHeaders, readHeaderAnnotations } from './headers.js';
import { answerInputRequests } from './inputs.js';
import { postRequest } from './transport.js';

/** A content block of a tool result (`text`, `image`, `audio`, `resource_link`, `resource`). */
export type ContentBlock = { type: string; text?: string } & Record<string, unknown>;

/**
 * A complete `CallToolResult`. `resultType` is `"complete"`, or absent when
 * the server predates it (read as complete, per the 2026-07-28 schema).
 */
export interface ToolResult {
  resultType?: 'complete';
  content: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** A tool as `tools/list` describes it. */
export interface ToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: {
    type?: string;
    properties?: Record<string, unknown>;
    required?: string[];
  } & Record<string, unknown>;
  annotations?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Options of {@link McpClient}. */
export interface McpClientOptions {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string | URL;
  /** Headers sent with every request, e.g. `{Authorization: "Bearer …"}`. */
  headers?: Record<string, string>;
  /** `io.modelcontextprotocol/clientInfo` (default `{name: "@mrtr/client", version: "0.1.0"}`). */
  clientInfo?: Implementation;
  /** The answerer for calls that do not name their own. Without one, no elicitation is declared. */
  answerer?: Answerer;
  /** `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** Requests sent per call at most, the first included (default 8). */
  maxRounds?: number;
  /** Milliseconds a question may stay unanswered before it counts as `cancel` (default 120 000). */
  answerTimeoutMs?: number;
  /** Milliseconds one HTTP exchange may take (default 120 000). */
  requestTimeoutMs?: number;
  /** Invalid answers to one question before the call fails with `InvalidAnswerError` (default 3). */
  maxInvalidAnswers?: number;
  /** Receives every {@link ClientEvent} as it happens. */
  onEvent?: (event: ClientEvent) => void;
}

/** Per-call options of {@link McpClient.callTool} and friends. */
export interface CallOptions {
  /** Overrides the client's answerer for this call; capabilities follow it. */
  answerer?: Answerer;
  /** Aborts the call: pending HTTP and the open question. */
  signal?: AbortSignal;
  /** The tool definition, to mirror its `x-mcp-header` arguments (default: from the last `listTools`). */
  tool?: ToolInfo;
  /** Overrides {@link McpClientOptions.maxRounds}. */
  maxRounds?: number;
  /** Overrides {@link McpClientOptions.answerTimeoutMs}. */
  answerTimeoutMs?: number;
  /** Receives this call's events (as well as the client's `onEvent`). */
  onEvent?: (event: ClientEvent) => void;
}

/** What a call ended with. */
export interface CallOutcome<R> {
  /** The complete result. */
  result: R;
  /** Requests sent, the first included. */
  rounds: number;
  /** Input requests the client declined without asking anyone, and why. */
  autoDeclined: AutoDeclined[];
  /** Everything that happened, in order. */
  events: ClientEvent[];
}

/** What {@link McpClient.listTools} returns. */
export interface ToolList {
  tools: ToolInfo[];
  /** Tools left out because their definition is invalid (e.g. a broken `x-mcp-header`). */
  rejected: { name: string; reason: string }[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The capabilities to declare for a call answered by `answerer`
 * (`client/elicitation`, "Capabilities"): `elicitation.form` when it can show
 * forms, `elicitation.url` when it can ask consent for URLs, nothing otherwise.
 */
export function capabilitiesFor(answerer: Answerer | undefined): ClientCapabilities {
  const elicitation: Record<string, Record<string, never>> = {};
  if (typeof answerer?.form === 'function') elicitation.form = {};
  if (answerer?.url && typeof answerer.url.ask === 'function') elicitation.url = {};
  return Object.keys(elicitation).length > 0 ? { elicitation } : {};
}

/**
 * A stateless MCP 2026-07-28 client over Streamable HTTP that runs Multi
 * Round-Trip Requests (`basic/patterns/mrtr`) with a person answering.
 *
 * Every request is its own POST with a new JSON-RPC id, the protocol
 * headers, and `_meta` carrying the protocol version, `clientInfo` and the
 * capabilities of this call's answerer. On an `InputRequiredResult` the
 * client asks the answerer, then retries the same params with
 * `inputResponses` under the same keys and `requestState` echoed exactly
 * (omitted when none was given).
 */
export class McpClient {
  /** The MCP endpoint. */
  readonly url: URL;
  private readonly options: McpClientOptions;
  private nextId = 1;
  private identity: ServerIdentity;
  private readonly known = new Map<string, { tool: ToolInfo; headers: HeaderAnnotation[] }>();

  /** @throws {TypeError} when `url` is not an absolute `http:` or `https:` URL */
  constructor(options: McpClientOptions) {
    this.url = new URL(options.url);
    if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:') {
      throw new TypeError(`The MCP endpoint must be http: or https:, got ${this.url.protocol}`);
    }
    this.options = options;
    this.identity = { url: this.url.href, origin: this.url.origin, host: this.url.host };
  }

  /** Which server is asking, as shown with every question; `name` once {@link discover} ran. */
  get server(): ServerIdentity {
    return { ...this.identity };
  }

  /**
   * `server/discover`: the server's versions, capabilities and
   * `serverInfo` (kept for {@link server}).
   * @throws {McpClientError} (see {@link request})
   */
  async discover(options: { signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    const result = await this.request('server/discover', {}, options);
    const meta = isObject(result._meta) ? result._meta : {};
    const info = meta['io.modelcontextprotocol/serverInfo'];
    if (isObject(info) && typeof info.name === 'string') {
      this.identity = {
        ...this.identity,
        name: info.name,
        ...(typeof info.title === 'string' ? { title: info.title } : {}),
      };
    }
    return result;
  }

  /**
   * `tools/list`, every page (at most 100). Tools with an invalid definition
   * (no name, no `inputSchema`, a broken `x-mcp-header`) are left out and
   * listed in `rejected` (`basic/transports/streamable-http`, "Schema Extension").
   * @throws {McpClientError} (see {@link request})
   */
  async listTools(options: { signal?: AbortSignal } = {}): Promise<ToolList> {
    const tools: ToolInfo[] = [];
    const rejected: ToolList['rejected'] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const result = await this.request('tools/list', cursor ? { cursor } : {}, options);
      if (!Array.isArray(result.tools))
        throw new ProtocolError('tools/list returned no tools array');
      for (const tool of result.tools) {
        const name = isObject(tool) && typeof tool.name === 'string' ? tool.name : '(unnamed)';
        if (!isObject(tool) || typeof tool.name !== 'string' || !isObject(tool.inputSchema)) {
          rejected.push({ name, reason: 'not a tool definition with a name and an inputSchema' });
          continue;
        }
        const headers = readHeaderAnnotations(tool.inputSchema);
        if (!headers.ok) {
          rejected.push({ name, reason: headers.reason });
          continue;
        }
        this.known.set(tool.name, { tool: tool as ToolInfo, headers: headers.annotations });
        tools.push(tool as ToolInfo);
      }
      if (typeof result.nextCursor !== 'string' || result.nextCursor === '') break;
      cursor = result.nextCursor;
    }
    return { tools, rejected };
  }

  /**
   * `tools/call`, run to completion: rounds of input are answered by the
   * answerer until the result is complete.
   *
   * @param name the tool name (sent as `Mcp-Name`, Base64-encoded when not plain ASCII)
   * @param args the `arguments`, identical in every round
   * @returns the complete `CallToolResult`, rounds, auto-declines and events
   * @throws {JsonRpcError} on a JSON-RPC error (e.g. `-32021` when no answerer could show the form)
   * @throws {RoundLimitError} when input is still wanted after `maxRounds` requests
   * @throws {InvalidAnswerError} when the answerer keeps giving invalid content (nothing invalid is sent)
   * @throws {ProtocolError} | {TransportError} | {AbortedError}
   */
  async callTool(
    name: string,
    args: Record<string, unknown> = {},
    options: CallOptions = {},
  ): Promise<CallOutcome<ToolResult>> {
    let headers: Record<string, string> = {};
    const annotations = options.tool
      ? readHeaderAnnotations(options.tool.inputSchema)
      : { ok: true as const, annotations: this.known.get(name)?.headers ?? [] };
    if (!annotations.ok) throw new ProtocolError(`Tool ${name} is invalid: ${annotations.reason}`);
    headers = paramHeaders(annotations.annotations, args);
    const outcome = await this.run(
      'tools/call',
      { name, arguments: args },
      { method: 'tools/call', target: name, arguments: args },
      options,
      headers,
    );
    if (!Array.isArray(outcome.result.content)) {
      throw new ProtocolError('The tools/call result has no content array');
    }
    return outcome as CallOutcome<ToolResult>;
  }

  /** `prompts/get`, run to completion like {@link callTool}. */
  getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: CallOptions = {},
  ): Promise<CallOutcome<Record<string, unknown>>> {
    return this.run(
      'prompts/get',
      { name, arguments: args },
      { method: 'prompts/get', target: name, arguments: args },
      options,
    );
  }

  /** `resources/read`, run to completion like {@link callTool}. */
  readResource(
    uri: string,
    options: CallOptions = {},
  ): Promise<CallOutcome<Record<string, unknown>>> {
    return this.run('resources/read', { uri }, { method: 'resources/read', target: uri }, options);
  }

  /**
   * Send one JSON-RPC request (a new id) with `_meta` and the protocol
   * headers, and return its `result` as received. No rounds are run.
   *
   * @param capabilities declared in `_meta` (default: those of the client's answerer)
   * @throws {JsonRpcError} on a JSON-RPC error response
   * @throws {TransportError} on HTTP failure or after `requestTimeoutMs`
   * @throws {ProtocolError} on a malformed response
   * @throws {AbortedError} when `signal` aborts
   */
  async request(
    method: string,
    params: Record<string, unknown>,
    options: {
      signal?: AbortSignal;
      capabilities?: ClientCapabilities;
      headers?: Record<string, string>;
      emit?: (event: ClientEvent) => void;
    } = {},
  ): Promise<Record<string, unknown>> {
    const capabilities = options.capabilities ?? capabilitiesFor(this.options.answerer);
    const withMeta = { ...params, _meta: this.meta(capabilities, params._meta) };
    return this.send(method, withMeta, options);
  }

  private meta(capabilities: ClientCapabilities, extra: unknown): Record<string, unknown> {
    return {
      ...(isObject(extra) ? extra : {}),
      [MetaKey.protocolVersion]: PROTOCOL_VERSION,
      [MetaKey.clientInfo]: this.options.clientInfo ?? { name: '@mrtr/client', version: '0.1.0' },
      [MetaKey.clientCapabilities]: capabilities,
    };
  }

  private async send(
    method: string,
    params: Record<string, unknown>,
    options: {
      signal?: AbortSignal;
      headers?: Record<string, string>;
      emit?: (event: ClientEvent) => void;
    },
  ): Promise<Record<string, unknown>> {
    if (options.signal?.aborted) throw new AbortedError({ cause: options.signal.reason });
    const timeoutMs = this.options.requestTimeoutMs ?? 120_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const emit = options.emit ?? ((event: ClientEvent) => this.options.onEvent?.(event));
    try {
      return await postRequest(
        { id: this.nextId++, method, params },
        {
          url: this.url,
          headers: { ...this.options.headers, ...options.headers },
          signal,
          ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
          onNotification: (notification) => emit({ type: 'notification', notification }),
          onIgnored: (reason) => emit({ type: 'ignored', reason }),
        },
      );
    } catch (error) {
      if (error instanceof McpClientError) throw error;
      if (options.signal?.aborted) throw new AbortedError({ cause: error });
      if (timeout.aborted) {
        throw new TransportError(`No response from ${this.url.origin} within ${timeoutMs} ms`);
      }
      throw new TransportError(
        `Request failed: ${error instanceof Error ? error.message : String(error)}`,
        undefined,
        {
          cause: error,
        },
      );
    }
  }

  /** The MRTR loop (`basic/patterns/mrtr`, "Client Requirements"). */
  private async run(
    method: string,
    baseParams: Record<string, unknown>,
    request: AskingRequest,
    options: CallOptions,
    headers: Record<string, string> = {},
  ): Promise<CallOutcome<Record<string, unknown> & ToolResult>> {
    const answerer = options.answerer ?? this.options.answerer;
    const maxRounds = options.maxRounds ?? this.options.maxRounds ?? 8;
    if (!Number.isInteger(maxRounds) || maxRounds < 1) throw new TypeError('maxRounds must be ≥ 1');
    const events: ClientEvent[] = [];
    const emit = (event: ClientEvent) => {
      events.push(event);
      options.onEvent?.(event);
      this.options.onEvent?.(event);
    };
    // The same params object every round: only inputResponses and requestState change.
    const base = { ...baseParams, _meta: this.meta(capabilitiesFor(answerer), undefined) };
    let retry: { inputResponses?: Record<string, unknown>; requestState?: string } = {};
    for (let round = 1; ; round++) {
      const params = { ...base, ...retry };
      const result = await this.send(method, params, {
        headers,
        emit,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const type = result.resultType;
      if (type === undefined || type === 'complete') {
        emit({ type: 'round', round, resultType: 'complete', keys: [] });
        const autoDeclined = events.filter((e): e is AutoDeclined => e.type === 'auto-declined');
        return {
          result: result as Record<string, unknown> & ToolResult,
          rounds: round,
          autoDeclined,
          events,
        };
      }
      if (type !== 'input_required')
        throw new ProtocolError(`Unknown resultType ${JSON.stringify(type)}`);
      const { inputRequests, requestState } = result;
      if (inputRequests !== undefined && !isObject(inputRequests)) {
        throw new ProtocolError('inputRequests is not an object');
      }
      if (requestState !== undefined && typeof requestState !== 'string') {
        throw new ProtocolError('requestState is not a string');
      }
      if (inputRequests === undefined && requestState === undefined) {
        throw new ProtocolError('An InputRequiredResult needs inputRequests or requestState');
      }
      emit({ type: 'round', round, resultType: type, keys: Object.keys(inputRequests ?? {}) });
      if (round >= maxRounds) throw new RoundLimitError(round, result);
      retry = {};
      if (inputRequests !== undefined) {
        retry.inputResponses = await answerInputRequests(inputRequests, {
          answerer,
          server: this.server,
          serverUrl: this.url,
          request,
          round,
          answerTimeoutMs: options.answerTimeoutMs ?? this.options.answerTimeoutMs ?? 120_000,
          maxInvalidAnswers: this.options.maxInvalidAnswers ?? 3,
          signal: options.signal,
          emit,
        });
      }
      // Echoed as received; never inspected. Absent here → absent in the retry.
      if (requestState !== undefined) retry.requestState = requestState;
    }
  }
}
