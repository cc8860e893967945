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

/**
 * A web `Request` read as an exchange. A class, not an object literal: a literal with a getter
 * is a new function per request, which V8 keeps as a slow dictionary-mode object and whose
 * reach it promotes to the old generation (docs/benchmarks.md, "Garbage").
 */
class WebExchange implements HttpExchange {
  readonly method: string;

  constructor(readonly request: Request) {
    this.method = request.method;
  }

  header(name: string): string | null {
    return this.request.headers.get(name);
  }

  host(): string {
    return requestHost(this.request);
  }

  readBody(maxBytes: number): Promise<BodyRead> {
    return readBody(this.request, maxBytes);
  }

  get signal(): AbortSignal {
    return this.request.signal;
  }
}

/** A web `Request` as an {@link HttpExchange}. */
export function webExchange(request: Request): HttpExchange {
  return new WebExchange(request);
}

/** A reply as a web `Response`. */
export function toResponse(reply: HttpReply): Response {
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}
