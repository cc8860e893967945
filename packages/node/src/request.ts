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

const HEADERS = Symbol('mrtr.node.headers');
interface HeaderState {
  exchange: HttpExchange;
  raw: string[];
  real?: Headers;
}
type WithHeaderState = { [HEADERS]: HeaderState };

/** The real `Headers` of the message's fields, built on first use. */
function realHeaders(self: object): Headers {
  const state = (self as WithHeaderState)[HEADERS];
  if (!state.real) {
    const headers = new Headers();
    for (let i = 0; i < state.raw.length; i += 2)
      headers.append(state.raw[i] as string, state.raw[i + 1] as string);
    state.real = headers;
  }
  return state.real;
}

/**
 * `Headers` over the message's fields (an instance of it, for `instanceof`):
 * `get` and `has` read the message; every other member answers from the
 * real `Headers`, built on first use.
 */
const headersPrototype = Object.create(Headers.prototype) as object;
Object.defineProperties(headersPrototype, {
  get: {
    value(this: WithHeaderState, name: string): string | null {
      const state = this[HEADERS];
      const key = String(name);
      if (!state.real && TOKEN.test(key)) return state.exchange.header(key.toLowerCase());
      return realHeaders(this).get(name);
    },
  },
  has: {
    value(this: Headers, name: string): boolean {
      return this.get(name) !== null;
    },
  },
});
for (const key of Reflect.ownKeys(Headers.prototype)) {
  if (key === 'constructor' || Object.hasOwn(headersPrototype, key)) continue;
  const descriptor = Object.getOwnPropertyDescriptor(Headers.prototype, key) as PropertyDescriptor;
  if (typeof descriptor.value !== 'function') continue;
  Object.defineProperty(headersPrototype, key, {
    value(this: object, ...args: unknown[]) {
      const real = realHeaders(this);
      return (descriptor.value as (...a: unknown[]) => unknown).apply(real, args);
    },
  });
}

/** Lazy `Headers` of `req`, read through `exchange`. */
function messageHeaders(exchange: HttpExchange, raw: string[]): Headers {
  const headers = Object.create(headersPrototype) as WithHeaderState;
  headers[HEADERS] = { exchange, raw };
  return headers as unknown as Headers;
}

const STATE = Symbol('mrtr.node.request');
interface State {
  req: IncomingMessage;
  exchange: HttpExchange;
  url: string;
  headers: Headers;
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
      headers: realHeaders(state.headers),
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
    headers: messageHeaders(exchange, req.rawHeaders),
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
