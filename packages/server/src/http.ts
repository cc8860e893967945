/**
 * The HTTP layer of Streamable HTTP that runs before any JSON is read
 * (MCP 2026-07-28, `basic/transports/streamable-http`, "Security & Endpoint"):
 * who may call (Host, Origin) and how much they may send.
 */

import { shownText } from '@mrtr/wire';

const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** 1 MiB: the default largest request body, bytes. */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;

/** The hostname of a `Host` value: `[::1]:3000` → `[::1]`, `example.com:80` → `example.com`. */
export function hostnameOf(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end === -1 ? host : host.slice(0, end + 1);
  }
  const colon = host.lastIndexOf(':');
  return (colon === -1 ? host : host.slice(0, colon)).toLowerCase();
}

/**
 * `Host` as RFC 9110 §7.2 has it, `uri-host [ ":" port ]`, narrowed to what
 * names a server: an IP literal in brackets, or a name of letters, digits,
 * `.`, `-`, `_` and `~` (an IPv4 address is one), then an optional port of
 * at most five digits. Two `Host` fields joined (`"a, b"`), userinfo
 * (`a@b`), a path, spaces or non-ASCII fail it.
 */
const HOST_SYNTAX = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]*)(?::(\d{0,5}))?$/;

/** The last `Host` checked and its verdict: a server sees the same one request after request. */
let lastHost = '';
let lastVerdict = true;

/**
 * Whether a `Host` value is one host (RFC 9112 §3.2: a server "MUST respond
 * with a 400 (Bad Request) status code to any request message that contains
 * more than one Host header field line or a Host header field with an
 * invalid field value"): the syntax above (empty is allowed, for a target
 * without authority), a port of at most 65535, and an IP literal in
 * brackets that parses. Adapters join repeated fields with `", "`, which
 * fails here. Which hosts are served is `allowedHosts`' business, not this.
 */
export function validHost(host: string): boolean {
  if (host === lastHost) return lastVerdict;
  const match = HOST_SYNTAX.exec(host);
  let verdict = match !== null && !(Number(match[1] ?? 0) > 65535);
  if (verdict && host.startsWith('[')) verdict = URL.canParse(`http://${host}`);
  lastHost = host;
  lastVerdict = verdict;
  return verdict;
}

const SCHEME_AND_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * The path of a request-target exactly as received (RFC 9112 §3.2): of the
 * origin form (`/mcp?x=1`) up to `?`, of the absolute form
 * (`http://host/mcp`) after its authority (`/` when it has no path).
 * Nothing is resolved or decoded: `/a/../mcp`, `/./mcp` and `/%6dcp` are
 * not `/mcp`, whereas a URL parser makes the first two `/mcp`. An adapter
 * that routes on this path serves the same requests as a reverse proxy in
 * front that allows `/mcp` by its exact path. For adapters that see the raw
 * request-target (`IncomingMessage.url` on `node:http`).
 * @param target the request-target as received.
 * @returns the path, possibly empty (the asterisk form `*` is returned as is).
 */
export function targetPath(target: string): string {
  const authority = SCHEME_AND_AUTHORITY.exec(target);
  const rest = authority ? target.slice(authority[0].length) : target;
  const query = rest.indexOf('?');
  const path = query === -1 ? rest : rest.slice(0, query);
  return authority && path === '' ? '/' : path;
}

/**
 * Why a request whose request-target is in absolute form
 * (`http://host/path`, RFC 9112 §3.2.2) is refused, or `undefined` for any
 * other target or one naming the `Host` it was sent with. An origin server
 * takes the host from such a target and ignores `Host`, while the endpoint
 * checks `Host` against `allowedHosts`: a target naming another host would
 * be served under a host it did not name. Browsers send the origin form
 * (`/path`), so a refusal here costs a browser nothing. For adapters that see
 * the raw request-target (`IncomingMessage.url` on `node:http`).
 * @param target the request-target as received.
 * @param host the `Host` header, if any.
 * @returns a message for a 400 with JSON-RPC `-32600`, or `undefined`.
 */
export function absoluteTargetProblem(
  target: string,
  host: string | undefined,
): string | undefined {
  if (target.startsWith('/') || !/^https?:\/\//i.test(target)) return undefined;
  let named: string;
  let sent: string | undefined;
  try {
    named = new URL(target).host;
    // Normalized as the target's authority is: lower case, the scheme's default port left out.
    sent =
      host === undefined
        ? undefined
        : new URL(`${target.slice(0, target.indexOf(':'))}://${host}`).host;
  } catch {
    return 'Bad Request: the request-target is not a valid absolute URL';
  }
  return named === sent
    ? undefined
    : 'Bad Request: the request-target names another host than the Host header';
}

/**
 * A predicate over the `Host` header value, from the `allowedHosts` option.
 * A list entry matches the whole value (`host:port`) or its hostname.
 */
export function hostPolicy(
  allowed: readonly string[] | ((host: string) => boolean) | undefined,
): (host: string) => boolean {
  if (typeof allowed === 'function') return allowed;
  if (allowed === undefined) return (host) => LOOPBACK_HOSTS.has(hostnameOf(host));
  const entries = new Set(allowed.map((h) => h.toLowerCase()));
  return (host) => entries.has(host.toLowerCase()) || entries.has(hostnameOf(host));
}

/** Longest part of a refused `Host` or `Origin` echoed in the error message (it is the client's input). */
const ECHO_LIMIT = 200;

/**
 * The message of the 403 for a `Host` (`setting` `'allowedHosts'`) or an
 * `Origin` (`'allowedOrigins'`) the endpoint refuses: the value received
 * (as `shownText` of `@mrtr/wire` shows it, at most 200 characters, JSON-quoted) and the option that would let it in,
 * with the loopback default when the option is not `configured`.
 */
export function notAllowedMessage(
  header: 'Host' | 'Origin',
  value: string,
  setting: 'allowedHosts' | 'allowedOrigins',
  configured: boolean,
): string {
  const shown = JSON.stringify(shownText(value, ECHO_LIMIT));
  const loopback =
    header === 'Host' ? 'localhost, 127.0.0.1, [::1]' : 'http(s)://localhost, 127.0.0.1, [::1]';
  const current = configured ? `the endpoint's ${setting}` : `${setting} (default: ${loopback})`;
  return `${header} not allowed: ${shown} is not in ${current}; to accept it, add it to the ${setting} option of createMcpEndpoint`;
}

/** A predicate over the `Origin` header value, from the `allowedOrigins` option. */
export function originPolicy(
  allowed: readonly string[] | ((origin: string) => boolean) | undefined,
): (origin: string) => boolean {
  if (typeof allowed === 'function') return allowed;
  if (allowed === undefined) return (origin) => LOOPBACK_ORIGIN.test(origin);
  const entries = new Set(allowed);
  return (origin) => entries.has(origin);
}

/**
 * The `Host` a request was sent to: the header when the runtime exposes it,
 * else the URL's host (web-standard `Request` objects hide `Host`).
 */
export function requestHost(request: Request): string {
  return request.headers.get('host') ?? new URL(request.url).host;
}

/** The outcome of reading a request body (`readBody`): `unreadable` is a broken stream or invalid UTF-8. */
export type BodyRead =
  | { ok: true; text: string }
  | { ok: false; reason: 'too-large' | 'unreadable' };

/** Invalid UTF-8 is not JSON text (RFC 8259 §8.1); it must not be repaired into some. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

function decode(bytes: Uint8Array | ArrayBuffer): BodyRead {
  try {
    return { ok: true, text: utf8.decode(bytes) };
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
}

/**
 * The body an adapter read in full, as reading a request body answers it: UTF-8
 * text, `too-large` past `maxBytes` bytes, `unreadable` for invalid UTF-8
 * (RFC 8259 §8.1: it is not repaired into JSON).
 */
export function bodyText(bytes: Uint8Array, maxBytes: number): BodyRead {
  return bytes.byteLength > maxBytes ? { ok: false, reason: 'too-large' } : decode(bytes);
}

/**
 * Read a request body as UTF-8 text, refusing it once it exceeds `maxBytes`
 * (bytes) without buffering the rest. A `Content-Length` above the limit is
 * refused before a byte is read.
 *
 * A body with a declared `Content-Length` within the limit is read in one
 * piece with `arrayBuffer()`: HTTP framing stops it at the declared length,
 * and adapters such as `@hono/node-server` serve it straight from the socket
 * without building web streams (the costliest step of a small request). Its
 * size is checked again after reading. A body without a declared length
 * (chunked) is read chunk by chunk and refused once it passes the limit. A
 * body past the limit is read to its end and dropped, within 16 MiB and 5 s
 * (a declared length beyond that is refused unread), so that a client still
 * sending gets the 413.
 */
export async function readBody(request: Request, maxBytes: number): Promise<BodyRead> {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared)) {
    const length = Number(declared);
    if (length > maxBytes) {
      if (length <= maxBytes + DISCARD_LIMIT_BYTES && request.body)
        await discardRest(request.body.getReader(), length);
      return { ok: false, reason: 'too-large' };
    }
    let bytes: ArrayBuffer;
    try {
      bytes = await request.arrayBuffer();
    } catch {
      return { ok: false, reason: 'unreadable' };
    }
    return bytes.byteLength > maxBytes ? { ok: false, reason: 'too-large' } : decode(bytes);
  }
  if (request.body === null) return { ok: true, text: '' };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await discardRest(reader, maxBytes + DISCARD_LIMIT_BYTES - size);
        return { ok: false, reason: 'too-large' };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
  return decode(Buffer.concat(chunks));
}

/** How much of a body past the limit is read and dropped before a 413, bytes (16 MiB). */
export const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024;
/** How long a body past the limit is read and dropped before a 413 goes out anyway, milliseconds. */
export const DISCARD_TIMEOUT_MS = 5000;

/**
 * Read and drop the rest of a refused body, at most `budget` bytes and
 * {@link DISCARD_TIMEOUT_MS}, then cancel what is left. A client still
 * sending when the 413 goes out and the connection closes would get a reset
 * instead of the answer (RFC 9112 §9.6 asks a server to keep reading before
 * it closes); within bounds, it finishes sending and reads the 413.
 */
async function discardRest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  budget: number,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), DISCARD_TIMEOUT_MS);
  });
  let left = budget;
  try {
    while (left > 0) {
      const next = await Promise.race([reader.read(), timeout]);
      if (next === 'timeout' || next.done) break;
      left -= next.value.byteLength;
    }
  } catch {
    // A broken stream: nothing left to drop.
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
}
