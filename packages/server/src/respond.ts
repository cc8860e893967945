import {
  ErrorCode,
  errorResponse,
  type JSONRPCNotification,
  MetaKey,
  type RequestId,
  type RequestMeta,
} from '@mrtr/wire';
import type { RequestAbort } from './context.js';
import type { HttpReply } from './exchange.js';

/**
 * Building HTTP replies (see `exchange.ts`): JSON bodies with the status each JSON-RPC error
 * takes on Streamable HTTP, and the per-request SSE stream that carries
 * notifications before the final response.
 */

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/** A JSON reply with `status`. */
export function json(status: number, body: unknown, headers?: Record<string, string>): HttpReply {
  // `...{}` first: see `finish` in dispatch.ts (a leading spread's copy that grows is promoted).
  const all = headers ? { ...{}, ...JSON_HEADERS, ...headers } : JSON_HEADERS;
  return { status, headers: all, body: JSON.stringify(body) };
}

/**
 * HTTP status of a JSON-RPC error code: 400 for malformed requests, header,
 * version and capability errors (`basic/index`, `streamable-http`), 404 for an
 * unknown method, 503 for a `-32603` a handler chose to throw (a dependency it
 * needs is down, e.g. the gate's replay store: the server itself is well and
 * the request may be retried), 200 for the rest (an application error is
 * still a delivered JSON-RPC response). An unexpected throw is answered 500
 * by the dispatcher, not through this table.
 */
export function statusFor(code: number): number {
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
      return 503;
    default:
      return 200;
  }
}

/** A JSON-RPC error response, with `status` or the one {@link statusFor} gives its code. */
export function fail(
  id: RequestId | undefined,
  code: number,
  message: string,
  data?: unknown,
  status = statusFor(code),
): HttpReply {
  return json(status, errorResponse(id, code, message, data));
}

/**
 * What a request's work ends with: the final JSON-RPC response, already
 * serialized (so a result that cannot be serialized is caught where it is
 * made, as an internal error), and its HTTP status.
 */
export interface Outcome {
  status: number;
  text: string;
}

const encoder = new TextEncoder();
const event = (text: string) => encoder.encode(`event: message\ndata: ${text}\n\n`);

/** The emitter of a request whose context can send no notification (see {@link mayStream}). */
export const ignore = (_notification: JSONRPCNotification): void => {};

/** A JSON reply carrying an outcome. */
export function jsonReply({ status, text }: Outcome): HttpReply {
  return { status, headers: JSON_HEADERS, body: text };
}

/**
 * Whether the answer to a request may become an SSE stream: it asked for
 * notifications (a `progressToken`, or a log level while `logging` is on:
 * without them the context's `progress` and `log` send nothing) and its
 * `Accept` allows `text/event-stream`. Otherwise {@link jsonReply} answers,
 * without the promise and stream machinery of {@link respond}.
 */
export function mayStream(meta: RequestMeta, logging: boolean, accept: string | null): boolean {
  const asked =
    meta.progressToken !== undefined || (logging && meta[MetaKey.logLevel] !== undefined);
  return asked && accept !== null && /text\/event-stream/i.test(accept);
}

/**
 * Run `work` and answer with JSON, or with an SSE stream once `work` emits a
 * notification before finishing (`streamable-http`, "Receiving Messages"): the
 * notifications, then the final response, then the stream closes. For a
 * request that {@link mayStream}. Closing the stream aborts `abort`.
 */
export function respond(
  abort: RequestAbort,
  work: (emit: (notification: JSONRPCNotification) => void) => Outcome | Promise<Outcome>,
): Promise<HttpReply> {
  // One promise per request: settled by the final outcome, or earlier by the first notification.
  return new Promise<HttpReply>((resolve, reject) => {
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    let finished = false;
    const emit = (notification: JSONRPCNotification) => {
      if (finished || abort.aborted) return;
      const chunk = event(JSON.stringify(notification));
      if (controller) {
        controller.enqueue(chunk);
        return;
      }
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          controller = c;
          c.enqueue(chunk);
        },
        cancel() {
          abort.abort();
        },
      });
      resolve({ status: 200, headers: SSE_HEADERS, body: stream });
    };
    Promise.resolve(work(emit)).then(
      ({ status, text }) => {
        finished = true;
        if (!controller) resolve({ status, headers: JSON_HEADERS, body: text });
        else if (!abort.aborted) {
          controller.enqueue(event(text));
          controller.close();
        }
      },
      (error: unknown) => {
        finished = true;
        if (!controller) reject(error);
        else controller.error(error);
      },
    );
  });
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
} as const;
