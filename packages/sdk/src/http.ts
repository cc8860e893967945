/**
 * The bridge's own HTTP answers, and how it reads the ones the official SDK
 * gives on the 2026-07-28 leg: JSON-RPC error bodies to a request whose id
 * is unknown omit `id` (2026-07-28 `JSONRPCErrorResponse.id` is an optional
 * `RequestId`, a string or an integer, never `null`), and a body the bridge
 * cannot read as sent (a charset other than UTF-8, a `Content-Encoding`) is
 * refused with 415, in the words of `@mrtr/server`.
 */
import { isJsonContentType } from '@modelcontextprotocol/server';
import { bodyEncodingProblem } from '@mrtr/wire';
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
 * An error response whose `id` is there but not a `RequestId`: `null`, or a
 * number that is not an integer (the SDK echoes the `1.5` of a request it
 * refuses as invalid), or not a safe one (`12345678901234567890` was parsed
 * rounded: echoed, it would name a request the client never sent).
 */
function hasInvalidId(body: unknown): body is Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as Record<string, unknown>;
  if (message.jsonrpc !== '2.0' || message.error === undefined || !('id' in message)) return false;
  return typeof message.id !== 'string' && !Number.isSafeInteger(message.id);
}

/**
 * `response` as the SDK's 2026-07-28 leg gave it, except that a JSON error
 * body with `"id": null` (its refusals of a request whose id it did not read:
 * a media type other than JSON, a batch, a body that is not a JSON-RPC
 * message), or with an id that is no `RequestId`, loses the `id` member;
 * status and headers stay (but `Content-Length`, which the new body
 * changes). Only error statuses are read: the SDK answers null ids with 4xx
 * and 5xx only, and a success body (or an SSE stream) passes untouched.
 */
export async function withoutInvalidId(response: Response): Promise<Response> {
  if (response.ok || response.body === null) return response;
  const type = response.headers.get('content-type');
  if (type === null || !isJsonContentType(type)) return response;
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  if (!hasInvalidId(body)) return response;
  await response.body.cancel().catch(() => {});
  const { id: _invalid, ...rest } = body;
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(rest), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}
