/**
 * The web `Request` of a directly served `IncomingMessage`, for what asks for
 * one (`authenticate`, `RequestContext.httpRequest`). `method`, `url`,
 * `headers.get`/`has` and `signal` are read from the message; anything else
 * (the body, `clone()`, iterating the headers) builds a real `Request` and
 * `Headers` from it on first use and answers from those. Once the endpoint
 * has read the body, that request carries the text it read (the converted
 * path's `Request` is used up by then and refuses to give it again).
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { HttpExchange } from '@mrtr/server';

/** A field name `Headers` accepts (RFC 9110 token); any other name is left to `Headers` to refuse. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** `Headers` over the message's fields: `get` and `has` read them; the rest copies them in first. */
class MessageHeaders extends Headers {
  #exchange: HttpExchange | undefined;
  #raw: string[];

  constructor(exchange: HttpExchange, raw: string[]) {
    super();
    this.#exchange = exchange;
    this.#raw = raw;
  }

  /** Copy every field into the real `Headers` (once); from then on they answer. */
  copy(): this {
    if (this.#exchange) {
      this.#exchange = undefined;
      for (let i = 0; i < this.#raw.length; i += 2)
        super.append(this.#raw[i] as string, this.#raw[i + 1] as string);
    }
    return this;
  }

  override get(name: string): string | null {
    const key = String(name);
    if (this.#exchange && TOKEN.test(key)) return this.#exchange.header(key.toLowerCase());
    return this.copy() && super.get(key);
  }

  override has(name: string): boolean {
    return this.get(name) !== null;
  }
}
for (const key of [
  'append',
  'delete',
  'set',
  'entries',
  'keys',
  'values',
  'forEach',
  'getSetCookie',
  Symbol.iterator,
] as const) {
  const own = Headers.prototype[key as keyof Headers] as (...args: unknown[]) => unknown;
  Object.defineProperty(MessageHeaders.prototype, key, {
    value(this: MessageHeaders, ...args: unknown[]) {
      return own.apply(this.copy(), args);
    },
    writable: true,
    configurable: true,
  });
}

const STATE = Symbol('mrtr.node.request');
interface State {
  req: IncomingMessage;
  exchange: HttpExchange;
  url: string;
  headers: MessageHeaders;
  /** The body text once the endpoint read it; else `undefined`, and the stream is taken for the real request. */
  body: () => string | undefined;
  real?: Request;
}

/** The real `Request`: the body the endpoint read, or the unread message as a stream. */
function real(self: object): Request {
  const state = (self as { [STATE]: State })[STATE];
  if (!state.real) {
    const { req, exchange } = state;
    const method = req.method ?? 'GET';
    const init: RequestInit & { duplex?: 'half' } = {
      method,
      headers: state.headers.copy(),
      signal: exchange.signal ?? null,
    };
    if (method !== 'GET' && method !== 'HEAD') {
      const read = state.body();
      init.body = read ?? (Readable.toWeb(req) as ReadableStream<Uint8Array>);
      init.duplex = 'half';
    }
    state.real = new Request(state.url, init);
  }
  return state.real;
}

/**
 * The prototype of lazy requests under `base` (the global `Request` when the
 * request is made: `@hono/node-server` replaces it with a subclass, and
 * `instanceof Request` must hold under either).
 */
function prototypeOf(base: typeof Request): object {
  const prototype = Object.create(base.prototype) as object;
  Object.defineProperties(prototype, {
    method: {
      get(this: { [STATE]: State }) {
        return this[STATE].req.method ?? 'GET';
      },
    },
    url: {
      get(this: { [STATE]: State }) {
        return this[STATE].url;
      },
    },
    headers: {
      get(this: { [STATE]: State }) {
        return this[STATE].headers;
      },
    },
    signal: {
      get(this: { [STATE]: State }) {
        return this[STATE].exchange.signal;
      },
    },
  });
  // Every other member of Request (and of a subclass between) answers from the real request.
  for (
    let level = base.prototype;
    level && level !== Object.prototype;
    level = Object.getPrototypeOf(level)
  )
    for (const key of Object.getOwnPropertyNames(level)) {
      if (key === 'constructor' || Object.hasOwn(prototype, key)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(level, key) as PropertyDescriptor;
      if (descriptor.get)
        Object.defineProperty(prototype, key, {
          get(this: object) {
            return real(this)[key as keyof Request];
          },
        });
      else if (typeof descriptor.value === 'function')
        Object.defineProperty(prototype, key, {
          value(this: object, ...args: unknown[]) {
            const request = real(this);
            return (request[key as keyof Request] as (...a: unknown[]) => unknown).apply(
              request,
              args,
            );
          },
        });
    }
  return prototype;
}
const prototypes = new WeakMap<typeof Request, object>();

/**
 * A `Request` (an instance of it, for `instanceof`) for `req`, whose body the
 * endpoint may already have read (`body()` gives its text then).
 */
export function lazyRequest(
  req: IncomingMessage,
  exchange: HttpExchange,
  body: () => string | undefined,
): Request {
  // \`body()\` is asked only when the real request is built: before the endpoint read it, that takes the stream.
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const state: State = {
    req,
    exchange,
    url: `${scheme}://${req.headers.host}${req.url}`,
    headers: new MessageHeaders(exchange, req.rawHeaders),
    body,
  };
  const base = globalThis.Request;
  let prototype = prototypes.get(base);
  if (!prototype) {
    prototype = prototypeOf(base);
    prototypes.set(base, prototype);
  }
  const request = Object.create(prototype) as Record<PropertyKey, unknown>;
  request[STATE] = state;
  return request as unknown as Request;
}
