import {
  encodeHeaderValue,
  MCP_NAME_FIELD,
  MetaKey,
  PROTOCOL_VERSION,
  shownText,
} from '@mrtr/wire';
import { createParser } from 'eventsource-parser';
import { JsonRpcError, ProtocolError, quoted, TransportError } from './errors.js';

/** A JSON-RPC 2.0 notification a server sent on a request's SSE stream (e.g. `notifications/progress`). */
export interface ServerNotification {
  method: string;
  params?: Record<string, unknown>;
}

/** What {@link postRequest} needs besides the message. */
export interface PostOptions {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: URL;
  /** Extra headers (e.g. `Authorization`); they cannot replace the protocol headers. */
  headers?: Record<string, string>;
  /** `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** Aborts the HTTP exchange. */
  signal?: AbortSignal;
  /**
   * Most bytes read of one response, in bytes (default {@link MAX_RESPONSE_BYTES}, 16 MiB):
   * an `application/json` body, or everything a `text/event-stream` sends up to and
   * including its response, notifications and comments counted. An event stream is
   * bounded as a body is, or a server could send notifications forever.
   */
  maxResponseBytes?: number;
  /** Called once with the bytes of the response read (body or stream), when it was read whole. */
  onResponseBytes?: (bytes: number) => void;
  /**
   * Called for each notification on an SSE response, before the response arrives, with
   * `size`, the length of its event data in UTF-16 code units (what keeping it costs).
   */
  onNotification?: (notification: ServerNotification, size: number) => void;
  /** Called for each message the client ignores (a request on the stream breaks the spec). */
  onIgnored?: (reason: string) => void;
}

/** The JSON-RPC request {@link postRequest} sends. */
export interface OutgoingRequest {
  id: number;
  method: string;
  params: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The default of the `maxResponseBytes` of a request: 16 MiB, for a JSON body and for an event stream alike. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * The headers Streamable HTTP requires on a POST
 * (`basic/transports/streamable-http`, "Sending Messages", "Request
 * Metadata"): `Content-Type`, `Accept` listing JSON and SSE,
 * `MCP-Protocol-Version` (the `io.modelcontextprotocol/protocolVersion` of
 * `params._meta`, so header and body always agree; `2026-07-28` when there is
 * none), `Mcp-Method`, and `Mcp-Name` (Base64 sentinel when needed) for
 * `tools/call`, `prompts/get` and `resources/read`.
 */
export function protocolHeaders(
  method: string,
  params: Record<string, unknown>,
): Record<string, string> {
  const meta = isObject(params._meta) ? params._meta : {};
  const version = meta[MetaKey.protocolVersion];
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': typeof version === 'string' ? version : PROTOCOL_VERSION,
    'Mcp-Method': method,
  };
  const field = MCP_NAME_FIELD[method];
  if (field && typeof params[field] === 'string') {
    headers['Mcp-Name'] = encodeHeaderValue(params[field]);
  }
  return headers;
}

/**
 * POST one JSON-RPC 2.0 request to an MCP endpoint and return its `result`,
 * reading either an `application/json` body or a `text/event-stream`
 * (notifications, then the response; the stream is closed once the response
 * is read).
 *
 * @returns the `result` object of the response whose `id` equals the request's
 * @throws {JsonRpcError} on a JSON-RPC error response (any HTTP status)
 * @throws {TransportError} on a network failure, an HTTP error without a
 *   JSON-RPC body, another content type, a body or an event stream over
 *   `maxResponseBytes` (the stream is closed at once), or a stream that ends
 *   without the response
 * @throws {ProtocolError} on a response that is not JSON-RPC 2.0 or answers another id
 */
export async function postRequest(
  request: OutgoingRequest,
  options: PostOptions,
): Promise<Record<string, unknown>> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: request.id,
    method: request.method,
    params: request.params,
  });
  const headers = {
    ...lowerKeys(options.headers),
    ...lowerKeys(protocolHeaders(request.method, request.params)),
  };
  const response = await fetchFollowing(options, headers, body);
  const limit = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  if (type.startsWith('text/event-stream')) {
    return readStream(response, request.id, limit, options);
  }
  const { text, size } = await readText(response, limit);
  options.onResponseBytes?.(size);
  const json = type.startsWith('application/json');
  let message: unknown;
  let parsed = false;
  try {
    message = json || !response.ok ? JSON.parse(text) : undefined;
    parsed = json || !response.ok;
  } catch {
    message = undefined;
  }
  if (!isObject(message)) {
    // The server's text, as an error message may quote it: controls (a terminal's escapes),
    // bidi and format characters as U+FFFD, bounded.
    const snippet = shownText(text.slice(0, 200).replace(/\s+/g, ' '), 200);
    const shownType = shownText(type || 'none', 100);
    throw new TransportError(
      !response.ok
        ? `HTTP ${response.status}${snippet ? `: ${snippet}` : ''}`
        : !json
          ? `HTTP ${response.status} with content type "${shownType}": expected application/json or text/event-stream`
          : parsed
            ? `HTTP ${response.status}: the JSON body is not a JSON-RPC response object`
            : `HTTP ${response.status}: the body is not valid JSON${snippet ? `: ${snippet}` : ''}`,
      response.status,
    );
  }
  return unwrap(message, request.id, response.status);
}

/** Most same-origin redirects followed for one request. */
export const MAX_REDIRECTS = 5;

/**
 * The POST, following only same-origin `307` and `308` redirects (at most
 * {@link MAX_REDIRECTS}): a redirect to another origin would send the
 * arguments, the person's answers and `requestState` to a server the person
 * was never shown, so it is refused, naming where it pointed.
 * @throws {TransportError} on a network failure or a redirect not followed
 */
async function fetchFollowing(
  options: PostOptions,
  headers: Record<string, string>,
  body: string,
): Promise<Response> {
  let url = options.url;
  for (let hops = 0; ; hops++) {
    let response: Response;
    try {
      response = await (options.fetch ?? fetch)(url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      throw new TransportError(`Could not reach ${url.origin}: ${describe(error)}`, undefined, {
        cause: error,
        responseLost: true,
      });
    }
    // A browser's fetch hides a manual redirect's target: refuse it unread.
    if (response.type === 'opaqueredirect')
      throw new TransportError(`The server at ${url.origin} redirected the request; not followed`);
    const location = response.headers.get('location');
    if (![301, 302, 303, 307, 308].includes(response.status) || location === null) return response;
    await response.body?.cancel().catch(() => {});
    const status = response.status;
    let target: URL;
    try {
      target = new URL(location, url);
    } catch {
      throw new TransportError(
        `HTTP ${status} to a Location that is not a URL: ${shownText(location, 200)}`,
        status,
      );
    }
    const where = shownText(target.href, 200);
    if (target.origin !== options.url.origin)
      throw new TransportError(
        `HTTP ${status}: ${options.url.origin} redirected the request to ${where}, another origin; not followed, nothing was sent there`,
        status,
      );
    if (status !== 307 && status !== 308)
      throw new TransportError(
        `HTTP ${status} redirect to ${where}: only 307 and 308 keep the POST; not followed`,
        status,
      );
    if (hops >= MAX_REDIRECTS)
      throw new TransportError(`More than ${MAX_REDIRECTS} redirects; stopped at ${where}`, status);
    url = target;
  }
}

function lowerKeys(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = v;
  return out;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

/** The body as text, and its size in bytes as received. @throws {TransportError} past `limit` bytes. */
async function readText(
  response: Response,
  limit: number,
): Promise<{ text: string; size: number }> {
  if (!response.body) return { text: '', size: 0 };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new TransportError(`Response larger than ${limit} bytes`, response.status);
    }
    text += decoder.decode(value, { stream: true });
  }
  return { text: text + decoder.decode(), size };
}

/** Turn a JSON-RPC response object into its result, or throw its error. */
function unwrap(
  message: Record<string, unknown>,
  id: number,
  status: number,
): Record<string, unknown> {
  if (message.jsonrpc !== '2.0') throw new ProtocolError('The response is not JSON-RPC 2.0');
  if (isObject(message.error)) {
    const { code, message: text, data } = message.error;
    // An error without id (or id null) answers a request the server could not read: ours.
    if (message.id !== undefined && message.id !== null && message.id !== id) {
      throw new ProtocolError(`The response answers request ${quoted(message.id)}, not ${id}`);
    }
    if (typeof code !== 'number' || !Number.isInteger(code) || typeof text !== 'string') {
      throw new ProtocolError('The JSON-RPC error object is malformed');
    }
    throw new JsonRpcError(code, text, data, status);
  }
  if (message.id !== id) {
    throw new ProtocolError(`The response answers request ${quoted(message.id)}, not ${id}`);
  }
  if (status < 200 || status > 299) {
    throw new TransportError(`HTTP ${status} with a JSON-RPC result`, status);
  }
  if (!isObject(message.result)) throw new ProtocolError('The JSON-RPC result is not an object');
  return message.result;
}

async function readStream(
  response: Response,
  id: number,
  limit: number,
  options: PostOptions,
): Promise<Record<string, unknown>> {
  if (!response.body) throw new TransportError('The event stream has no body', response.status);
  let outcome: { message: Record<string, unknown> } | { error: Error } | undefined;
  const parser = createParser({
    maxBufferSize: limit,
    onEvent(event) {
      if (outcome) return;
      if (event.event !== undefined && event.event !== 'message') return;
      let message: unknown;
      try {
        message = JSON.parse(event.data);
      } catch {
        outcome = { error: new ProtocolError('An event on the stream is not JSON') };
        return;
      }
      if (!isObject(message)) {
        outcome = { error: new ProtocolError('An event on the stream is not a JSON-RPC message') };
      } else if ('result' in message || 'error' in message) {
        outcome = { message };
      } else if (typeof message.method === 'string' && message.id === undefined) {
        options.onNotification?.(
          {
            method: message.method,
            ...(isObject(message.params) ? { params: message.params } : {}),
          },
          event.data.length,
        );
      } else {
        // Servers must not send requests on the stream (2026-07-28); answering one is not ours to do.
        // The method is quoted clipped: the reason is kept with the call's events, and must not grow with it.
        options.onIgnored?.(`ignored a ${quoted(message.method)} request on the response stream`);
      }
    },
    onError(error) {
      outcome ??= {
        // The parser quotes the server's text (an unknown field, a `retry` value): shown, bounded.
        error: new TransportError(
          `Malformed event stream: ${shownText(error.message, 200)}`,
          response.status,
        ),
      };
    },
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  try {
    while (!outcome) {
      const { done, value } = await reader.read();
      if (done) {
        parser.feed(`${decoder.decode()}\n\n`);
        break;
      }
      size += value.byteLength;
      // The whole stream, not one event: notifications without end would otherwise never stop.
      if (size > limit) {
        throw new TransportError(
          `The event stream sent more than ${limit} bytes without the response`,
          response.status,
        );
      }
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } finally {
    // The response is in (or the stream failed): close it; closing never cancels a finished request.
    await reader.cancel().catch(() => {});
  }
  if (!outcome)
    throw new TransportError('The event stream ended without a response', response.status, {
      responseLost: true,
    });
  if ('error' in outcome) throw outcome.error;
  options.onResponseBytes?.(size);
  return unwrap(outcome.message, id, response.status);
}
