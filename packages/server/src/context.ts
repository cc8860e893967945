/**
 * The per-request {@link RequestContext} handed to handlers. Its `signal` is
 * made on first read: an `AbortController` (and, through `@hono/node-server`,
 * a second one behind `Request.signal`) costs more than the rest of the
 * context, and most handlers never look at it.
 */
import { LoggingLevelSchema, MetaKey, type RequestMeta } from '@mrtr/wire';
import type { HttpExchange } from './exchange.js';
import type { Principal, RequestContext } from './types.js';

const LEVELS = LoggingLevelSchema.options;

/** Cancellation of one request: the client went away, or closed its SSE stream. */
export class RequestAbort {
  #controller: AbortController | undefined;
  #aborted = false;

  /** @param exchange the request: its `signal` is followed, its `request` is the context's `httpRequest`. */
  constructor(readonly exchange: HttpExchange) {}

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
  /** The request's cancellation, and through it the exchange (`httpRequest`). */
  abort: RequestAbort;
  /** `false`: `log` sends nothing (the endpoint's `logging` option). */
  logging: boolean;
}

/** Where the shared accessors below find the request of the context they are read on. */
const ABORT = Symbol('mrtr.requestAbort');
type Built = RequestContext & { [ABORT]: RequestAbort };

/** Turn an accessor of `target` into a plain property holding `value`, as a handler's assignment asks. */
function replace(target: object, name: 'httpRequest' | 'signal', value: unknown): void {
  Object.defineProperty(target, name, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

// One getter and setter per property for every context: accessors written in an object literal are
// new functions per request, and V8 (Node 20) keeps such objects in slow dictionary mode and promotes
// all the request's objects they reach to the old generation (docs/benchmarks.md, "Garbage").
const HTTP_REQUEST: PropertyDescriptor = {
  // Read from the exchange when asked: an adapter may build the web Request only then.
  get(this: Built) {
    return this[ABORT].exchange.request;
  },
  set(this: Built, value: Request) {
    replace(this, 'httpRequest', value);
  },
  enumerable: true,
  configurable: true,
};
const SIGNAL: PropertyDescriptor = {
  get(this: Built) {
    return this[ABORT].signal;
  },
  // A handler may replace its signal (e.g. with `AbortSignal.any`), as it could a plain property.
  set(this: Built, value: AbortSignal) {
    replace(this, 'signal', value);
  },
  enumerable: true,
  configurable: true,
};

/** The context of one request; `emit` sends a notification on its response stream. */
export function createRequestContext(
  { id, principal, meta, params, abort, logging }: ContextInput,
  emit: (notification: { jsonrpc: '2.0'; method: string; params: Record<string, unknown> }) => void,
): RequestContext {
  const progressToken = meta.progressToken;
  const logLevel = logging ? meta[MetaKey.logLevel] : undefined;
  // Own properties in the order of the RequestContext interface, `httpRequest` and `signal` lazy.
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
    [ABORT]: abort,
  } as Partial<Built>;
  Object.defineProperty(context, 'httpRequest', HTTP_REQUEST);
  Object.defineProperty(context, 'signal', SIGNAL);
  context.progress = (progress, total, message) => {
    if (progressToken === undefined) return;
    const p: Record<string, unknown> = { progressToken, progress };
    if (total !== undefined) p.total = total;
    if (message !== undefined) p.message = message;
    emit({ jsonrpc: '2.0', method: 'notifications/progress', params: p });
  };
  context.log = (level, data, logger) => {
    // No logLevel in _meta: the server MUST NOT send notifications/message.
    if (logLevel === undefined || LEVELS.indexOf(level) < LEVELS.indexOf(logLevel)) return;
    const p: Record<string, unknown> = { level, data };
    if (logger !== undefined) p.logger = logger;
    emit({ jsonrpc: '2.0', method: 'notifications/message', params: p });
  };
  return context as Built;
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
