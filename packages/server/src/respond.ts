import { ErrorCode, errorResponse, type JSONRPCNotification, type RequestId } from '@mrtr/wire';

/**
 * Building HTTP responses: JSON bodies with the status each JSON-RPC error
 * takes on Streamable HTTP, and the per-request SSE stream that carries
 * notifications before the final response.
 */

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/** A JSON response with `status`. */
export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/**
 * HTTP status of a JSON-RPC error code: 400 for malformed requests, header,
 * version and capability errors (`basic/index`, `streamable-http`), 404 for an
 * unknown method, 500 for an internal error, 200 for the rest (an application
 * error is still a delivered JSON-RPC response).
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
      return 500;
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
): Response {
  return json(status, errorResponse(id, code, message, data));
}

/** What a request's work ends with: the final JSON-RPC response and its HTTP status. */
export interface Outcome {
  status: number;
  body: unknown;
}

const encoder = new TextEncoder();
const event = (message: unknown) =>
  encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);

/**
 * Run `work` and answer with JSON, or with an SSE stream once `work` emits a
 * notification before finishing (`streamable-http`, "Receiving Messages"): the
 * notifications, then the final response, then the stream closes. With
 * `streamable` false (the client did not accept `text/event-stream`) emitted
 * notifications are dropped. Closing the stream aborts `abort`.
 */
export async function respond(
  streamable: boolean,
  abort: AbortController,
  work: (emit: (notification: JSONRPCNotification) => void) => Promise<Outcome>,
): Promise<Response> {
  const queued: Uint8Array[] = [];
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let finished = false;
  let signalFirst: () => void = () => {};
  const firstEmit = new Promise<'emit'>((resolve) => {
    signalFirst = () => resolve('emit');
  });
  const emit = (notification: JSONRPCNotification) => {
    if (!streamable || finished || abort.signal.aborted) return;
    const chunk = event(notification);
    if (controller) controller.enqueue(chunk);
    else queued.push(chunk);
    signalFirst();
  };
  const outcome = work(emit).finally(() => {
    finished = true;
  });
  const first = await Promise.race([outcome.then(() => 'done' as const), firstEmit]);
  if (first === 'done' && queued.length === 0) {
    const { status, body } = await outcome;
    return json(status, body);
  }
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      for (const chunk of queued.splice(0)) c.enqueue(chunk);
      outcome.then(({ body }) => {
        if (abort.signal.aborted) return;
        c.enqueue(event(body));
        c.close();
      });
    },
    cancel() {
      abort.abort();
    },
  });
  return new Response(stream, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    },
  });
}
