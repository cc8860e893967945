/**
 * The bridge's own HTTP answers, and how it reads the ones the official SDK
 * gives on the 2026-07-28 leg: JSON-RPC error bodies to a request whose id
 * is unknown omit `id` (2026-07-28 `JSONRPCErrorResponse.id` is an optional
 * `RequestId`, a string or an integer, never `null`), and a body the bridge
 * cannot read as sent (a charset other than UTF-8, a `Content-Encoding`) is
 * refused with 415, in the words of `@mrtr/server`.
 */
import { isJsonContentType } from '@modelcontextprotocol/server';
import {
  bodyEncodingProblem,
  type JSONRPCErrorObject,
  shownText,
  unsupportedVersionError,
} from '@mrtr/wire';
import { parse as parseContentType } from 'content-type';

/** A JSON-RPC error response to a request whose id is unknown: no `id` member. */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers?: Record<string, string>,
): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message } }, { status, headers });
}

/**
 * Why the body of a JSON POST cannot be read as sent, or `undefined`:
 * JSON-RPC bodies are UTF-8 (RFC 8259 §8.1), so a `charset` parameter of the
 * Content-Type (parsed as RFC 9110 §8.3.2 says, as `@mrtr/server` parses it)
 * other than UTF-8 (any letter case, `utf8` too) is refused rather than
 * misread, and a `Content-Encoding` other than `identity` is one the bridge
 * does not decode, so it must not ignore it (RFC 9110 §8.4; 415 with
 * `Accept-Encoding: identity`, §15.5.16), by `bodyEncodingProblem` of
 * `@mrtr/wire`, the rule `@mrtr/server`'s endpoint applies. A Content-Type
 * that is not JSON is left to the SDK's own 415.
 */
export function requestEncodingProblem(request: Request): string | undefined {
  const type = request.headers.get('content-type');
  if (type === null || !isJsonContentType(type)) return undefined;
  return bodyEncodingProblem(
    parseContentType(type).parameters.charset,
    request.headers.get('content-encoding'),
  );
}

/**
 * The `id` of `body` when it is one JSON-RPC 2.0 request (JSON-RPC 2.0 §4:
 * `jsonrpc` "2.0", a string `method`, `params` an object when present, no
 * `result` or `error` member) whose id is a `RequestId` (a string or a safe
 * integer), sent as JSON (`request`'s Content-Type); else `undefined`: a
 * notification, a response, a batch, a body that is not JSON or was sent as
 * another media type (which the SDK refuses unread, as `@mrtr/server` does).
 */
export function requestIdOf(request: Request, body: unknown): string | number | undefined {
  if (!isJsonContentType(request.headers.get('content-type') ?? '')) return undefined;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { jsonrpc, method, params, id } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || 'result' in body || 'error' in body)
    return undefined;
  if (
    params !== undefined &&
    (params === null || typeof params !== 'object' || Array.isArray(params))
  )
    return undefined;
  return isRequestId(id) ? (id as string | number) : undefined;
}

/** Longest error message the bridge passes on, UTF-16 code units; longer ones are clipped. */
const MAX_MESSAGE = 512;
/** Longest string of an error's `data` passed on; `data` whose JSON is longer than {@link MAX_DATA} is dropped. */
const MAX_DATA_STRING = 256;
const MAX_DATA = 4096;

/**
 * Whether `id` is a `RequestId` an answer can carry back: a string of
 * well-formed Unicode or a safe integer (not `null`, `1.5`, a rounded huge
 * number, a lone surrogate).
 */
export function isRequestId(id: unknown): boolean {
  return typeof id === 'string'
    ? (id as string & { isWellFormed(): boolean }).isWellFormed()
    : Number.isSafeInteger(id);
}

/** Every string of `value` through `shownText`, at most {@link MAX_DATA_STRING} code units each. */
function shownStrings(value: unknown): unknown {
  if (typeof value === 'string') return shownText(value, MAX_DATA_STRING);
  if (Array.isArray(value)) return value.map(shownStrings);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value))
    out[shownText(key, MAX_DATA_STRING)] = shownStrings(member);
  return out;
}

/**
 * The error of a JSON-RPC error response as the bridge passes it on: the
 * message through `shownText` of `@mrtr/wire` (controls, bidi and other
 * format characters as U+FFFD, at most {@link MAX_MESSAGE} code units), the
 * same for every string of `data`, and `data` left out when its JSON is
 * longer than {@link MAX_DATA}: the SDK quotes header and `_meta` values a
 * client chose as they came, at any length. `undefined` when nothing changes.
 */
function screened(error: unknown): Record<string, unknown> | undefined {
  if (error === null || typeof error !== 'object' || Array.isArray(error)) return undefined;
  const { message, data, ...rest } = error as Record<string, unknown>;
  const shown = typeof message === 'string' ? shownText(message, MAX_MESSAGE) : message;
  let kept = data === undefined ? undefined : shownStrings(data);
  if (kept !== undefined && JSON.stringify(kept).length > MAX_DATA) kept = undefined;
  const same = shown === message && JSON.stringify(kept) === JSON.stringify(data);
  if (same) return undefined;
  return { ...rest, message: shown, ...(kept !== undefined ? { data: kept } : {}) };
}

/**
 * `response` as the SDK gave it, except in a JSON error body: an `id` that
 * is no `RequestId` (`null` in its refusals of a request whose id it did not
 * read: on the 2026-07-28 leg a media type other than JSON, a batch, a body
 * that is not a JSON-RPC message; on a 2025-era session the transport's
 * refusals of an unsupported `MCP-Protocol-Version`, an `Accept` without
 * both JSON and SSE, a second `initialize`; `1.5`, echoed from a request it
 * refuses; a huge number it parsed rounded) becomes `requestId`, the id of
 * the request as sent (see {@link requestIdOf}), or is left out when there
 * is none: never `"id": null` (2026-07-28 `JSONRPCErrorResponse.id` is an
 * optional `RequestId`; JSON-RPC 2.0 §5 allows `null` only for an id that
 * could not be read, and then an error without `id` says the same). The
 * error is {@link screened}. Status and headers stay (but `Content-Length`,
 * which the new body changes). JSON bodies of any status are read (the SDK
 * answers some errors with 200); an SSE stream passes untouched.
 * @param requestId the `id` of the request `response` answers, when its body is one JSON-RPC
 *   request sent as JSON; `undefined` when unknown
 * @param options.modern the response is of the 2026-07-28 leg: a `-32601` the SDK answered
 *   with 200 gets `404 Not Found`, as streamable-http ("Request Metadata") requires
 * @returns `response` itself when nothing changes.
 */
export async function screenedError(
  response: Response,
  requestId?: string | number,
  options: { modern?: boolean } = {},
): Promise<Response> {
  if (response.body === null) return response;
  const type = response.headers.get('content-type');
  if (type === null || !isJsonContentType(type)) return response;
  // The SDK answers some errors (an unknown tool, a method it lacks) with 200: those are read too.
  // A result is parsed only when its text holds an `"error"` member name anywhere.
  const text = await response
    .clone()
    .text()
    .catch(() => '');
  if (response.ok && !text.includes('"error"')) return response;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return response;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return response;
  const message = body as Record<string, unknown>;
  if (message.jsonrpc !== '2.0' || message.error === undefined) return response;
  const badId = 'id' in message && !isRequestId(message.id);
  const error = screened(message.error);
  // 2026-07-28 streamable-http: a method the server does not implement is `404 Not Found` with
  // `-32601` (the SDK answers 200). Not on a 2025-era session, where 404 means the session is gone.
  const status =
    options.modern &&
    response.status === 200 &&
    (message.error as { code?: unknown })?.code === -32601
      ? 404
      : response.status;
  if (!badId && error === undefined && status === response.status) return response;
  await response.body.cancel().catch(() => {});
  const { id, error: original, ...rest } = message;
  const kept = badId ? requestId : 'id' in message ? id : undefined;
  const out = { ...rest, ...(kept === undefined ? {} : { id: kept }), error: error ?? original };
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(out), {
    status,
    ...(status === response.status ? { statusText: response.statusText } : {}),
    headers,
  });
}

/** A JSON-RPC error response with HTTP `status`, carrying `id` when one was read (JSON-RPC 2.0 §5). */
export function jsonRpcResponse(
  status: number,
  id: string | number | undefined,
  error: JSONRPCErrorObject,
): Response {
  return Response.json({ jsonrpc: '2.0', ...(id !== undefined ? { id } : {}), error }, { status });
}

/**
 * The `-32022` UnsupportedProtocolVersion answer (HTTP 400) to a request whose
 * `MCP-Protocol-Version` names a version neither leg serves, as
 * `@mrtr/server` words it (`basic/versioning`): `data.requested` (the header,
 * through `shownText`, at most 64 code units) and `data.supported`.
 * @param id the request's id when it can be read, else none (JSON-RPC 2.0 §5)
 */
export function unsupportedVersion(
  requested: string,
  supported: readonly string[],
  id: string | number | undefined,
): Response {
  const shown = shownText(requested, 64);
  const error = unsupportedVersionError(shown, supported);
  error.message = `Unsupported protocol version: ${shown}. Supported: ${supported.join(', ')}.`;
  return jsonRpcResponse(400, id, error);
}
