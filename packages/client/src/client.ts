import {
  type ClientCapabilities,
  type HeaderAnnotation,
  MetaKey,
  PROTOCOL_VERSION,
  readHeaderAnnotations,
  shownText,
} from '@mrtr/wire';
import { type AskingRequest, capabilitiesFor, type ServerIdentity } from './answerer.js';
import { AbortedError, LimitError, ProtocolError, quoted, TransportError } from './errors.js';
import type { ClientEvent } from './events.js';
import { exchange } from './exchange.js';
import { paramHeaders } from './headers.js';
import { runRounds } from './rounds.js';
import type {
  CallOptions,
  CallOutcome,
  McpClientOptions,
  ToolInfo,
  ToolList,
  ToolResult,
} from './types.js';

export type {
  CallOptions,
  CallOutcome,
  ContentBlock,
  McpClientOptions,
  ToolInfo,
  ToolList,
  ToolResult,
} from './types.js';

/** Set by the build (tsup.config.ts) and by vitest.config.ts to this package's version. */
declare const __MRTR_CLIENT_VERSION__: string | undefined;

/**
 * `clientInfo` sent when the options name none: this package, at its own
 * version (`0.0.0-source` when the source runs unbuilt, e.g. under tsx).
 */
const DEFAULT_CLIENT_INFO = {
  name: '@mrtr/client',
  version: typeof __MRTR_CLIENT_VERSION__ === 'string' ? __MRTR_CLIENT_VERSION__ : '0.0.0-source',
} as const;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Most pages {@link McpClient.listTools} reads. */
export const MAX_LIST_PAGES = 100;
/** Most tools (valid and rejected together) {@link McpClient.listTools} keeps across all pages. */
export const MAX_LISTED_TOOLS = 10_000;
/** Most bytes of responses {@link McpClient.listTools} reads across all pages: 32 MiB. */
export const MAX_LISTING_BYTES = 32 * 1024 * 1024;
/**
 * Most `notification` and `ignored` events one call keeps in
 * {@link CallOutcome.events}; later ones still reach `onEvent`, and are
 * counted in {@link CallOutcome.droppedEvents}.
 */
export const MAX_KEPT_NOTIFICATIONS = 1000;
/**
 * Most UTF-16 code units of notification data (and ignored-message reasons)
 * one call keeps in {@link CallOutcome.events}: 1 Mi. A notification past it
 * is dropped as past {@link MAX_KEPT_NOTIFICATIONS}.
 */
export const MAX_KEPT_NOTIFICATION_CHARS = 1024 * 1024;

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
  private known = new Map<string, { tool: ToolInfo; headers: HeaderAnnotation[] }>();

  /**
   * @throws {TypeError} when `url` is not an absolute `http:` or `https:` URL
   * @throws {RangeError} when `answerTimeoutMs`, `requestTimeoutMs` or `listTimeoutMs` is not a
   *   number of milliseconds from 1 to 2,147,483,647 (what Node's timers can wait), `maxRounds`
   *   not a whole number from 1 to 1000, or `maxInvalidAnswers` not one from 0 to 1000
   */
  constructor(options: McpClientOptions) {
    this.url = new URL(options.url);
    if (this.url.protocol !== 'http:' && this.url.protocol !== 'https:') {
      throw new TypeError(`The MCP endpoint must be http: or https:, got ${this.url.protocol}`);
    }
    checkTimer('answerTimeoutMs', options.answerTimeoutMs);
    checkTimer('requestTimeoutMs', options.requestTimeoutMs);
    checkTimer('listTimeoutMs', options.listTimeoutMs);
    checkCount('maxRounds', options.maxRounds, 1);
    checkCount('maxInvalidAnswers', options.maxInvalidAnswers, 0);
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
   * `tools/list`, every page (at most {@link MAX_LIST_PAGES}). Tools with an
   * invalid definition (no name, no `inputSchema`, a broken `x-mcp-header`, a
   * schema too deep to walk) are left out and listed in `rejected`
   * (`basic/transports/streamable-http`, "Schema Extension").
   *
   * The listing as a whole is bounded, so a server cannot fill memory or
   * time with pages: at most {@link MAX_LISTED_TOOLS} tools (rejected ones
   * included), {@link MAX_LISTING_BYTES} bytes of responses, and
   * `listTimeoutMs` (default 120 000 ms) for all pages together, besides
   * `requestTimeoutMs` for each.
   * @throws {LimitError} past {@link MAX_LISTED_TOOLS} or {@link MAX_LISTING_BYTES}
   * @throws {TransportError} when the pages take longer than `listTimeoutMs`
   * @throws {McpClientError} (see {@link request})
   */
  async listTools(options: { signal?: AbortSignal } = {}): Promise<ToolList> {
    const tools: ToolInfo[] = [];
    const rejected: ToolList['rejected'] = [];
    const known = new Map<string, { tool: ToolInfo; headers: HeaderAnnotation[] }>();
    const timeoutMs = this.options.listTimeoutMs ?? 120_000;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    let bytes = 0;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      let result: Record<string, unknown>;
      try {
        result = await this.send(
          'tools/list',
          {
            ...(cursor ? { cursor } : {}),
            _meta: this.meta(capabilitiesFor(this.options.answerer), undefined),
          },
          {
            signal,
            onResponseBytes: (n) => {
              bytes += n;
            },
          },
        );
      } catch (error) {
        if (error instanceof AbortedError && deadline.aborted && !options.signal?.aborted)
          throw new TransportError(
            `tools/list did not finish within ${timeoutMs} ms (listTimeoutMs), after ${page} ${page === 1 ? 'page' : 'pages'}`,
          );
        throw error;
      }
      if (bytes > MAX_LISTING_BYTES)
        throw new LimitError(
          'MAX_LISTING_BYTES',
          MAX_LISTING_BYTES,
          `tools/list sent more than ${MAX_LISTING_BYTES} bytes over ${page + 1} pages; gave up`,
        );
      if (!Array.isArray(result.tools))
        throw new ProtocolError('tools/list returned no tools array');
      if (tools.length + rejected.length + result.tools.length > MAX_LISTED_TOOLS)
        throw new LimitError(
          'MAX_LISTED_TOOLS',
          MAX_LISTED_TOOLS,
          `tools/list lists more than ${MAX_LISTED_TOOLS} tools; gave up`,
        );
      for (const tool of result.tools) {
        const name = isObject(tool) && typeof tool.name === 'string' ? tool.name : '(unnamed)';
        if (!isObject(tool) || typeof tool.name !== 'string' || !isObject(tool.inputSchema)) {
          rejected.push({ name, reason: 'not a tool definition with a name and an inputSchema' });
          continue;
        }
        const headers = readHeaderAnnotations(tool.inputSchema);
        if (!headers.ok) {
          rejected.push({ name, reason: shownText(headers.reason, 300) });
          continue;
        }
        known.set(tool.name, { tool: tool as ToolInfo, headers: headers.annotations });
        tools.push(tool as ToolInfo);
      }
      if (typeof result.nextCursor !== 'string' || result.nextCursor === '') break;
      cursor = result.nextCursor;
    }
    // The whole listing replaces the last one: a tool gone or now invalid is no longer known.
    this.known = known;
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
   * @throws {RangeError} when `options.maxRounds` is not a whole number from 1 to 1000
   */
  async callTool(
    name: string,
    args: Record<string, unknown> = {},
    options: CallOptions = {},
  ): Promise<CallOutcome<ToolResult>> {
    const annotations = options.tool
      ? readHeaderAnnotations(options.tool.inputSchema)
      : { ok: true as const, annotations: this.known.get(name)?.headers ?? [] };
    if (!annotations.ok)
      throw new ProtocolError(
        `Tool ${quoted(name)} is invalid: ${shownText(annotations.reason, 300)}`,
      );
    const signal = options.signal;
    const outcome = await this.run(
      'tools/call',
      { name, arguments: args },
      { method: 'tools/call', target: name, arguments: args },
      options,
      paramHeaders(annotations.annotations, args),
      async () => {
        await this.listTools(signal ? { signal } : {});
        const fresh = this.known.get(name);
        return fresh ? paramHeaders(fresh.headers, args) : undefined;
      },
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
   * headers, and return its `result` as received. No rounds are run, and no
   * answer can be sent through it: `inputResponses` and `requestState` come
   * only from {@link callTool}, {@link getPrompt} and {@link readResource},
   * whose answers come from the answerer. A `-32022` (unsupported protocol
   * version) whose `data.supported` lists a version this client speaks is
   * retried once with that version.
   *
   * @param options.capabilities declared in `_meta` (default: those of the client's answerer)
   * @throws {TypeError} when `params` carries `inputResponses` or `requestState`
   * @throws {JsonRpcError} on a JSON-RPC error response
   * @throws {TransportError} on HTTP failure or after `requestTimeoutMs`
   * @throws {ProtocolError} on a malformed response, or an `InputRequiredResult`
   *   to a method that may not return one (anything but `tools/call`, `prompts/get`, `resources/read`)
   * @throws {AbortedError} when `signal` aborts
   */
  async request(
    method: string,
    params: Record<string, unknown>,
    options: {
      signal?: AbortSignal;
      capabilities?: ClientCapabilities;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Record<string, unknown>> {
    for (const key of ['inputResponses', 'requestState']) {
      if (Object.hasOwn(params, key))
        throw new TypeError(
          `request() sends no ${key}: answers are sent only by callTool, getPrompt and readResource, from the answerer`,
        );
    }
    const capabilities = options.capabilities ?? capabilitiesFor(this.options.answerer);
    const withMeta = { ...params, _meta: this.meta(capabilities, params._meta) };
    return this.send(method, withMeta, options);
  }

  private meta(capabilities: ClientCapabilities, extra: unknown): Record<string, unknown> {
    return {
      ...(isObject(extra) ? extra : {}),
      [MetaKey.protocolVersion]: PROTOCOL_VERSION,
      [MetaKey.clientInfo]: this.options.clientInfo ?? DEFAULT_CLIENT_INFO,
      [MetaKey.clientCapabilities]: capabilities,
    };
  }

  private send(
    method: string,
    params: Record<string, unknown>,
    options: {
      signal?: AbortSignal;
      headers?: Record<string, string>;
      emit?: (event: ClientEvent, size?: number) => void;
      onResponseBytes?: (bytes: number) => void;
    },
  ): Promise<Record<string, unknown>> {
    return exchange(method, params, {
      ...(options.onResponseBytes ? { onResponseBytes: options.onResponseBytes } : {}),
      url: this.url,
      headers: { ...this.options.headers, ...options.headers },
      ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
      timeoutMs: this.options.requestTimeoutMs ?? 120_000,
      nextId: () => this.nextId++,
      ...(options.signal ? { signal: options.signal } : {}),
      emit: options.emit ?? ((event) => this.options.onEvent?.(event)),
    });
  }

  /** One call run to completion by {@link runRounds}, with this client's options. */
  private run(
    method: string,
    baseParams: Record<string, unknown>,
    request: AskingRequest,
    options: CallOptions,
    headers: Record<string, string> = {},
    refreshHeaders?: () => Promise<Record<string, string> | undefined>,
  ): Promise<CallOutcome<Record<string, unknown> & ToolResult>> {
    const answerer = options.answerer ?? this.options.answerer;
    const maxRounds = checkCount('maxRounds', options.maxRounds, 1) ?? this.options.maxRounds ?? 8;
    const events: ClientEvent[] = [];
    // Notifications come as often and as large as the server likes: only so many are kept.
    let keptNotifications = 0;
    let keptChars = 0;
    let dropped = 0;
    const emit = (event: ClientEvent, size = 0) => {
      if (event.type === 'notification' || event.type === 'ignored') {
        if (
          keptNotifications >= MAX_KEPT_NOTIFICATIONS ||
          keptChars + size > MAX_KEPT_NOTIFICATION_CHARS
        )
          dropped++;
        else {
          keptNotifications++;
          keptChars += size;
          events.push(event);
        }
      } else events.push(event);
      options.onEvent?.(event);
      this.options.onEvent?.(event);
    };
    const signal = options.signal;
    return runRounds(
      // The same params object every round: only inputResponses and requestState change.
      { ...baseParams, _meta: this.meta(capabilitiesFor(answerer), undefined) },
      {
        send: (params, extra) =>
          this.send(method, params, { headers: extra, emit, ...(signal ? { signal } : {}) }),
        emit,
        events,
        droppedEvents: () => dropped,
        answerer,
        server: this.server,
        serverUrl: this.url,
        request,
        maxRounds,
        answerTimeoutMs:
          checkTimer('answerTimeoutMs', options.answerTimeoutMs) ??
          this.options.answerTimeoutMs ??
          120_000,
        maxInvalidAnswers: this.options.maxInvalidAnswers ?? 3,
        signal,
        headers,
        ...(refreshHeaders ? { refreshHeaders } : {}),
      },
    );
  }
}

/** Most rounds, and most invalid answers, a call may be set to take: a person answers each. */
const MAX_COUNT = 1000;

/** `n` unchanged when absent or a whole number from `min` to {@link MAX_COUNT}. @throws {RangeError} otherwise. */
function checkCount(name: string, n: number | undefined, min: number): number | undefined {
  if (n === undefined) return n;
  if (!(Number.isSafeInteger(n) && n >= min && n <= MAX_COUNT))
    throw new RangeError(`${name} must be a whole number from ${min} to ${MAX_COUNT}, got ${n}`);
  return n;
}

/** Node's timers wait at most 2^31 − 1 ms; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` unchanged when absent or a usable timer delay. @throws {RangeError} otherwise. */
function checkTimer(name: string, ms: number | undefined): number | undefined {
  if (ms === undefined) return ms;
  if (!(typeof ms === 'number' && ms >= 1 && ms <= MAX_TIMER_MS))
    throw new RangeError(
      `${name} must be a number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${ms}`,
    );
  return ms;
}
