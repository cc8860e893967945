/**
 * The per-request {@link RequestContext} handed to handlers. Its `signal` is
 * made on first read: an `AbortController` (and, through `@hono/node-server`,
 * a second one behind `Request.signal`) costs more than the rest of the
 * context, and most handlers never look at it.
 */
import { type LoggingLevel, LoggingLevelSchema, MetaKey, type RequestMeta } from '@mrtr/wire';
import type { HttpExchange } from './exchange.js';
import type { Principal, RequestContext } from './types.js';

const LEVELS = LoggingLevelSchema.options;

/** Cancellation of one request: the client went away, or closed its SSE stream. */
export class RequestAbort {
  #controller: AbortController | undefined;
  #aborted = false;

  constructor(private readonly exchange: HttpExchange) {}

  /** The signal handlers see; follows the HTTP request's own signal once read. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      const controller = new AbortController();
      this.#controller = controller;
      // The request may have ended before anyone asked: an adapter's signal is then born aborted.
      const upstream = this.exchange.signal;
      if (this.#aborted || upstream?.aborted) controller.abort();
      else upstream?.addEventListener('abort', () => controller.abort(), { once: true });
    }
    return this.#controller.signal;
  }

  /** Whether the request was cancelled (reads the HTTP request's signal). */
  get aborted(): boolean {
    return this.#aborted || this.signal.aborted;
  }

  abort(): void {
    this.#aborted = true;
    this.#controller?.abort();
  }
}

/** What {@link createRequestContext} needs besides the emitter. */
export interface ContextInput {
  id: RequestContext['requestId'];
  principal: Principal;
  meta: RequestMeta;
  params: Record<string, unknown>;
  exchange: HttpExchange;
  abort: RequestAbort;
  /** `false`: `log` sends nothing (the endpoint's `logging` option). */
  logging: boolean;
}

/** Where the shared accessors of a context find their request (not enumerable). */
const SOURCE = Symbol('mrtr.context.source');
interface Source {
  exchange: HttpExchange;
  abort: RequestAbort;
}
type Sourced = { [SOURCE]: Source };

/**
 * A handler may replace `httpRequest` or `signal` (e.g. with `AbortSignal.any`),
 * as it could a plain property: the value becomes an own data property.
 */
function replace(self: object, key: string, value: unknown): void {
  Object.defineProperty(self, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * The lazy members of every context: own, enumerable accessors made from
 * these shared functions. Accessors written in each context's object literal
 * would be new functions per request, which V8 (Node 20) keeps in
 * accessor pairs in the old generation: every request's objects they reach
 * were then promoted by the next scavenge (docs/benchmarks.md, "Garbage").
 */
const LAZY: PropertyDescriptorMap = {
  // Read from the exchange when asked: an adapter may build the web Request only then.
  httpRequest: {
    get(this: Sourced) {
      return this[SOURCE].exchange.request;
    },
    set(value: Request) {
      replace(this, 'httpRequest', value);
    },
    enumerable: true,
    configurable: true,
  },
  signal: {
    get(this: Sourced) {
      return this[SOURCE].abort.signal;
    },
    set(value: AbortSignal) {
      replace(this, 'signal', value);
    },
    enumerable: true,
    configurable: true,
  },
};

/** The context of one request; `emit` sends a notification on its response stream. */
export function createRequestContext(
  { id, principal, meta, params, exchange, abort, logging }: ContextInput,
  emit: (notification: { jsonrpc: '2.0'; method: string; params: Record<string, unknown> }) => void,
): RequestContext {
  const progressToken = meta.progressToken;
  const logLevel = logging ? meta[MetaKey.logLevel] : undefined;
  const context = {
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
    progress(progress: number, total?: number, message?: string) {
      if (progressToken === undefined) return;
      const p: Record<string, unknown> = { progressToken, progress };
      if (total !== undefined) p.total = total;
      if (message !== undefined) p.message = message;
      emit({ jsonrpc: '2.0', method: 'notifications/progress', params: p });
    },
    log(level: LoggingLevel, data: unknown, logger?: string) {
      // No logLevel in _meta: the server MUST NOT send notifications/message.
      if (logLevel === undefined || LEVELS.indexOf(level) < LEVELS.indexOf(logLevel)) return;
      const p: Record<string, unknown> = { level, data };
      if (logger !== undefined) p.logger = logger;
      emit({ jsonrpc: '2.0', method: 'notifications/message', params: p });
    },
  };
  Object.defineProperty(context, SOURCE, { value: { exchange, abort } satisfies Source });
  return Object.defineProperties(context, LAZY) as unknown as RequestContext;
}

/**
 * `context` with the method-specific fields added. The context is made for
 * one request and one handler, so it is extended in place: a copy by spread
 * would read (and so create) the lazy `signal`.
 */
export function extendContext<T extends object>(
  context: RequestContext,
  extra: T,
): RequestContext & T {
  return Object.assign(context, extra);
}
