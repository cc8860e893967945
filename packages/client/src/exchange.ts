import { ErrorCode, MetaKey, PROTOCOL_VERSION } from '@mrtr/wire';
import {
  AbortedError,
  JsonRpcError,
  McpClientError,
  ProtocolError,
  quoted,
  TransportError,
} from './errors.js';
import type { ClientEvent } from './events.js';
import { postRequest } from './transport.js';

/**
 * The requests a server may answer with an `InputRequiredResult`
 * (`basic/patterns/mrtr`, "Supported Requests"); on any other, such an
 * answer breaks the protocol.
 */
/** Versions a server named, quoted ({@link quoted}), at most ten, then how many more. */
function listed(versions: readonly unknown[]): string {
  const shown = versions.slice(0, 10).map(quoted).join(', ');
  return versions.length > 10 ? `${shown} and ${versions.length - 10} more` : shown;
}

export const MRTR_METHODS: ReadonlySet<string> = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
]);

/** The protocol versions this client speaks, preferred first. */
export const SPOKEN_VERSIONS: readonly string[] = [PROTOCOL_VERSION];

/** What one exchange needs from the client. */
export interface ExchangeContext {
  url: URL;
  /** Extra headers (e.g. `Authorization`, `Mcp-Param-*`). */
  headers: Record<string, string>;
  fetch?: typeof fetch;
  /** Milliseconds one HTTP exchange may take. */
  timeoutMs: number;
  /** A new JSON-RPC id for every POST. */
  nextId(): number;
  signal?: AbortSignal;
  /**
   * Every event of the exchange; `size` (UTF-16 code units of the event's data) comes with a
   * `notification`, so the call can bound what it keeps.
   */
  emit(event: ClientEvent, size?: number): void;
  /** Called with the bytes of each response read whole (see `PostOptions.onResponseBytes`). */
  onResponseBytes?: (bytes: number) => void;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The version to retry with after `error`: a `-32022` whose `data.supported` lists one we speak. */
function versionToRetry(error: unknown): { version: string; supported: string[] } | undefined {
  if (!(error instanceof JsonRpcError) || error.rpcCode !== ErrorCode.UnsupportedProtocolVersion)
    return undefined;
  const data = error.data;
  if (!isObject(data) || !Array.isArray(data.supported)) return undefined;
  const supported = data.supported.filter((v): v is string => typeof v === 'string');
  const version = SPOKEN_VERSIONS.find((v) => supported.includes(v));
  return version === undefined ? undefined : { version, supported };
}

/**
 * Send one JSON-RPC request and return its `result`. When the server refuses
 * the protocol version (`-32022` UnsupportedProtocolVersion) and its
 * `data.supported` lists a version this client speaks, the request is sent
 * once more, with a new id and that version in `_meta` and in the
 * `MCP-Protocol-Version` header (`basic/versioning`, "Protocol Version
 * Negotiation"); the server processed nothing of the refused request.
 *
 * @param params the params with `_meta` already filled in
 * @throws {JsonRpcError} on an error response, including a `-32022` that lists no version we speak or a second `-32022`
 * @throws {ProtocolError} when a method other than `tools/call`, `prompts/get`
 *   or `resources/read` is answered with an `InputRequiredResult`, or the response is malformed
 * @throws {TransportError} | {AbortedError}
 */
export async function exchange(
  method: string,
  params: Record<string, unknown>,
  ctx: ExchangeContext,
): Promise<Record<string, unknown>> {
  let result: Record<string, unknown>;
  try {
    result = await postReissuing(method, params, ctx);
  } catch (error) {
    const retry = versionToRetry(error);
    if (!retry) throw error;
    ctx.emit({
      type: 'retried',
      method,
      reason: 'unsupported-version',
      // The server's list, each version quoted and at most ten of them: it is a reason, not data.
      detail: `the server supports ${listed(retry.supported)}; sent again with ${retry.version}`,
    });
    const meta = isObject(params._meta) ? params._meta : {};
    const again = { ...params, _meta: { ...meta, [MetaKey.protocolVersion]: retry.version } };
    result = await postReissuing(method, again, ctx);
  }
  if (result.resultType === 'input_required' && !MRTR_METHODS.has(method)) {
    throw new ProtocolError(
      `The server answered ${method} with an InputRequiredResult; only tools/call, prompts/get and resources/read may ask for input`,
    );
  }
  return result;
}

/** One POST with the timeout and abort turned into {@link McpClientError}s. */
async function postOnce(
  method: string,
  params: Record<string, unknown>,
  ctx: ExchangeContext,
): Promise<Record<string, unknown>> {
  if (ctx.signal?.aborted) throw new AbortedError({ cause: ctx.signal.reason });
  const timeout = AbortSignal.timeout(ctx.timeoutMs);
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;
  try {
    return await postRequest(
      { id: ctx.nextId(), method, params },
      {
        url: ctx.url,
        headers: ctx.headers,
        signal,
        ...(ctx.fetch ? { fetch: ctx.fetch } : {}),
        onNotification: (notification, size) =>
          ctx.emit({ type: 'notification', notification }, size),
        onIgnored: (reason) => ctx.emit({ type: 'ignored', reason }, reason.length),
        ...(ctx.onResponseBytes ? { onResponseBytes: ctx.onResponseBytes } : {}),
      },
    );
  } catch (error) {
    if (error instanceof McpClientError) throw error;
    if (ctx.signal?.aborted) throw new AbortedError({ cause: error });
    if (timeout.aborted) {
      throw new TransportError(`No response from ${ctx.url.origin} within ${ctx.timeoutMs} ms`);
    }
    // The body's read failed (the connection reset mid-response): the request went out.
    throw new TransportError(
      `Request failed: ${error instanceof Error ? error.message : String(error)}`,
      undefined,
      { cause: error, responseLost: true },
    );
  }
}

/**
 * Most times one request is re-issued after its response was lost
 * (`TransportError.responseLost`), each as a new request with a new id.
 */
export const MAX_REISSUES = 2;

/**
 * Requests re-issued when their response is lost: those that change nothing
 * (`prompts/get` and `resources/read` included: a server's input request only
 * asks). A `tools/call` is re-issued only as a retry that echoes a
 * `requestState`: the server keyed what it does on it, so a re-issued retry
 * is answered with what was done (a server built on `@mrtr/gate` replays the
 * recorded outcome). A first `tools/call` may have run a tool that asks
 * nothing; sending it again could run it twice, so its loss is thrown.
 */
const REISSUED_METHODS: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
]);

/** Whether `method` with `params` is re-issued after its response was lost. */
function reissuable(method: string, params: Record<string, unknown>): boolean {
  return (
    REISSUED_METHODS.has(method) ||
    (method === 'tools/call' && typeof params.requestState === 'string')
  );
}

/**
 * {@link postOnce}, re-issued as a new request with a new id, at most
 * {@link MAX_REISSUES} times, 250 ms × the attempt apart, when the response
 * was lost and {@link reissuable} says it may be
 * (`basic/transports/streamable-http`, 2026-07-28 change 9: "clients MUST
 * re-issue it as a new request with a new request ID").
 */
async function postReissuing(
  method: string,
  params: Record<string, unknown>,
  ctx: ExchangeContext,
): Promise<Record<string, unknown>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await postOnce(method, params, ctx);
    } catch (error) {
      if (
        !(error instanceof TransportError) ||
        !error.responseLost ||
        attempt > MAX_REISSUES ||
        !reissuable(method, params)
      )
        throw error;
      ctx.emit({
        type: 'retried',
        method,
        reason: 'response-lost',
        detail: `${error.message}; re-issued as a new request (${attempt} of ${MAX_REISSUES})`,
      });
      await pause(250 * attempt, ctx.signal);
    }
  }
}

/** Wait `ms`, or until `signal` aborts. @throws {AbortedError} when it does. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError({ cause: signal.reason }));
    const done = () => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(new AbortedError({ cause: signal?.reason }));
    };
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
