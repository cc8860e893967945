/**
 * Running one method's handler and turning what it returns or throws into
 * the final JSON-RPC response: results shaped for the wire (`resultType`,
 * `_meta.serverInfo`, caching hints; `basic/index`, "ResultType"), errors
 * mapped to codes and HTTP statuses, and everything serialized here, so that
 * a result that cannot be sent is an internal error, never a broken response.
 */
import {
  databaseRefusal,
  ErrorCode,
  errorResponse,
  McpError,
  MetaKey,
  type RequestId,
  serviceUnavailable,
  shownText,
} from '@mrtr/wire';
import { checkInputRequired, MRTR_METHODS } from './input-required.js';
import type { MethodHandler } from './methods.js';
import type { Outcome } from './respond.js';
import { statusFor } from './respond.js';
import type { McpEndpointOptions, RequestContext } from './types.js';

/** Results that carry `ttlMs` and `cacheScope` (`CacheableResult`). */
const CACHEABLE = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

const isEnumerable = Object.prototype.propertyIsEnumerable;

const INTERNAL = (id: RequestId): Outcome => ({
  status: 500,
  text: JSON.stringify(errorResponse(id, ErrorCode.InternalError, 'Internal error')),
});

/**
 * `(method, id, params, context) => Outcome`, at once when the handler
 * answered at once, else as a promise; never throws nor rejects.
 */
export type Run = (
  method: string,
  id: RequestId,
  params: Record<string, unknown>,
  context: RequestContext,
) => Outcome | Promise<Outcome>;

/** `error instanceof McpError`, false for a value that throws when asked (a revoked `Proxy`). */
function isMcpError(error: unknown): error is McpError {
  try {
    return error instanceof McpError;
  } catch {
    return false;
  }
}

/**
 * The JSON-RPC error a thrown error stands for when it is no bug of the
 * server: a database refusing the request's data, or a service that cannot
 * be reached. An error that throws as it is read (a getter, a `Proxy`) stands
 * for nothing: the caller answers it as an internal error, never throws.
 */
function classified(error: unknown): McpError | undefined {
  try {
    return databaseRefusal(error) ?? serviceUnavailable(error);
  } catch {
    return undefined;
  }
}

/**
 * `onError` whose own failure must not change what the client is answered:
 * a reporter that throws loses that report only.
 */
export function quietly(onError: (error: unknown) => void): (error: unknown) => void {
  return (error) => {
    try {
      onError(error);
    } catch {
      // Nothing to do: see above.
    }
  };
}

/** Whether `await value` would wait for `value` (a promise or another thenable). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** The runner of an endpoint's method table. */
export function dispatcher(
  methods: Map<string, MethodHandler>,
  options: McpEndpointOptions,
  onError: (error: unknown) => void,
): Run {
  // Serialized once: every direct reply appends this text, and the copied path spreads the same snapshot.
  const serverMetaText = JSON.stringify(
    options.includeServerInfo === false ? {} : { [MetaKey.serverInfo]: options.serverInfo },
  );
  const serverMeta = JSON.parse(serverMetaText) as Record<string, unknown>;
  const addsMeta = Object.keys(serverMeta).length > 0;

  /** Shape a handler's result for the wire; throws on what must never be sent. */
  function finish(method: string, result: unknown, context: RequestContext) {
    if (result === null || typeof result !== 'object' || Array.isArray(result))
      throw new Error(`${method} handler returned ${result === null ? 'null' : typeof result}`);
    // `...{}` first: V8 (Node 20) clones a leading spread's shape with no room to grow, and the copy,
    // once a property is added, is promoted to the old generation (docs/benchmarks.md, "Garbage").
    const out: Record<string, unknown> = { ...{}, ...result };
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
    if (addsMeta || out._meta !== undefined) out._meta = { ...{}, ...meta, ...serverMeta };
    return out;
  }

  /**
   * The JSON text {@link finish} and `JSON.stringify` would make of `result`, made without copying
   * it, or `undefined` when that could differ: only for a plain object that names its own
   * `resultType` as a string, has no `_meta` nor `toJSON`, and needs no caching hints, whose JSON
   * is then its own with `_meta` appended last, as the copy would have it.
   */
  function directText(method: string, result: unknown, context: RequestContext) {
    if (result === null || typeof result !== 'object') return undefined;
    if (Object.getPrototypeOf(result) !== Object.prototype || CACHEABLE.has(method))
      return undefined;
    const r = result as Record<string, unknown>;
    if (typeof r.resultType !== 'string' || !isEnumerable.call(r, 'resultType')) return undefined;
    if ('_meta' in r || r.toJSON !== undefined) return undefined;
    if (r.resultType === 'input_required') {
      if (!MRTR_METHODS.has(method)) throw new Error(`${method} may not answer input_required`);
      checkInputRequired(r as never, context.capabilities);
    }
    const json = JSON.stringify(r);
    return addsMeta ? `${json.slice(0, -1)},"_meta":${serverMetaText}}` : json;
  }

  /** The outcome of a handler's `result`: the response, or the error it turns out to be. */
  function answer(method: string, id: RequestId, result: unknown, context: RequestContext) {
    try {
      // Serialized inside the try: a BigInt, a cycle or a too deep value is a handler bug (-32603).
      const text = directText(method, result, context);
      if (text !== undefined)
        return {
          status: 200,
          text: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${text}}`,
        };
      const shaped = finish(method, result, context);
      return { status: 200, text: JSON.stringify({ jsonrpc: '2.0', id, result: shaped }) };
    } catch (error) {
      return failure(id, error);
    }
  }

  /** The outcome of what a handler threw or rejected with. */
  function failure(id: RequestId, error: unknown): Outcome {
    if (isMcpError(error)) {
      // A handler's own -32603 is a fault of the server side (the gate's unreachable replay store,
      // a failed audit sink): the client is told little, so the operator must hear of it and its cause.
      if (error.code === ErrorCode.InternalError) onError(error);
      try {
        const body = errorResponse(id, error.code, error.message, error.data);
        return { status: statusFor(error.code), text: JSON.stringify(body) };
      } catch (unserializable) {
        onError(unserializable);
        return INTERNAL(id);
      }
    }
    onError(error);
    // The caller's error, not the server's: the database refused what the request carried.
    // Nor is a database or service that cannot be reached: 503, the request may be retried.
    const refused = classified(error);
    if (refused)
      return {
        status: statusFor(refused.code),
        text: JSON.stringify(errorResponse(id, refused.code, refused.message, refused.data)),
      };
    return INTERNAL(id);
  }

  return (method, id, params, context) => {
    let result: unknown;
    let thenable: boolean;
    try {
      const handler = methods.get(method);
      if (!handler)
        throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${shownText(method, 64)}`);
      result = handler(params, context);
      // Inside the try: reading `then` runs a getter of the handler's result, which may throw.
      thenable = isThenable(result);
    } catch (error) {
      return failure(id, error);
    }
    // A handler that answered at once is answered at once: no promise and tick of an `await`.
    if (!thenable) return answer(method, id, result, context);
    return Promise.resolve(result).then(
      (settled) => answer(method, id, settled, context),
      (error: unknown) => failure(id, error),
    );
  };
}
