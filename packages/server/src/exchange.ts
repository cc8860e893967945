/**
 * The endpoint's view of one HTTP exchange, whatever runtime carries it.
 * The web-standard endpoint reads a `Request` through {@link webExchange} and
 * answers a `Response` made by {@link toResponse}; `@mrtr/node` reads an
 * `IncomingMessage` and writes the {@link HttpReply} to its `ServerResponse`
 * without building either web object. Both run the same endpoint code.
 */
import { type BodyRead, readBody, requestHost } from './http.js';

/** One HTTP request as the endpoint reads it (`McpEndpoint.serve`). */
export interface HttpExchange {
  /** The request method, e.g. `POST`. */
  readonly method: string;
  /**
   * A header value by lower-case name, `null` when absent; repeated fields
   * joined with `", "`, as `Headers.get` gives them.
   */
  header(name: string): string | null;
  /** The `Host` the request was sent to (`host:port`). */
  host(): string;
  /** The body as UTF-8 text, refused past `maxBytes` bytes (see `readBody` of `http.ts`). */
  readBody(maxBytes: number): Promise<BodyRead>;
  /**
   * The request as a web `Request`: what `authenticate` and
   * `RequestContext.httpRequest` get. An adapter may build it on first read.
   */
  readonly request: Request;
  /** Aborted when the client goes away; an adapter may make it on first read. */
  readonly signal: AbortSignal | undefined;
}

/** The endpoint's answer: status, headers, and a text body, none, or an SSE stream. */
export interface HttpReply {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string | null | ReadableStream<Uint8Array>;
}

/** A web `Request` as an {@link HttpExchange}. */
export function webExchange(request: Request): HttpExchange {
  return {
    method: request.method,
    header: (name) => request.headers.get(name),
    host: () => requestHost(request),
    readBody: (maxBytes) => readBody(request, maxBytes),
    request,
    get signal() {
      return request.signal;
    },
  };
}

/** A reply as a web `Response`. */
export function toResponse(reply: HttpReply): Response {
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}
