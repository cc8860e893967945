/**
 * Reading the JSON-RPC envelope of a request body (`basic/index`,
 * "Requests"), checked in place: a schema parse would copy the whole body on
 * every request.
 */
import type { RequestId } from '@mrtr/wire';

/**
 * Whether `id` is a `RequestId` a response can carry back as the client
 * sent it: a string of well-formed Unicode (a lone surrogate is no Unicode
 * scalar value, RFC 8259 §8.2, and a strict client cannot read it back as
 * its own id), or a safe integer (zod's `int()`: a larger one would not
 * survive the round trip).
 */
function isAnswerableId(id: unknown): id is RequestId {
  return typeof id === 'string'
    ? (id as string & { isWellFormed(): boolean }).isWellFormed()
    : typeof id === 'number' && Number.isSafeInteger(id);
}

/** The id of a body, when it has one a response may carry. */
export function idOf(body: unknown): RequestId | undefined {
  const raw = body && typeof body === 'object' ? (body as { id?: unknown }).id : undefined;
  return isAnswerableId(raw) ? raw : undefined;
}

/**
 * The members of a `JSONRPCRequest` (`JSONRPCRequestSchema` of `@mrtr/wire`:
 * `jsonrpc` "2.0", a safe integer or a
 * string of well-formed Unicode as `id`, a string `method`, `params` an
 * object when present, and neither `result` nor `error`), or `undefined`
 * when the body is not one. JSON-RPC 2.0 §4 makes a request of `jsonrpc`,
 * `method`, `params` and `id`; a `result` or `error` member makes a
 * response (§5), which is no request whatever else it holds.
 */
export function requestEnvelope(
  body: unknown,
): { id: RequestId; method: string; params: Record<string, unknown> } | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const { jsonrpc, id, method, params } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0' || typeof method !== 'string') return undefined;
  // Two `in` tests: Object.prototype has neither member, so they find only the body's own.
  if ('result' in body || 'error' in body) return undefined;
  if (!isAnswerableId(id)) return undefined;
  if (params === undefined) return { id, method, params: {} };
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return undefined;
  return { id, method, params: params as Record<string, unknown> };
}

/**
 * The version an `initialize` request (the handshake of protocol revisions
 * up to 2025-11-25) asks for: `params.protocolVersion` when a string, else
 * the `MCP-Protocol-Version` header, else `undefined` (none named).
 */
export function legacyRequestedVersion(
  params: Record<string, unknown>,
  header: string | null,
): string | undefined {
  const asked = params.protocolVersion;
  if (typeof asked === 'string') return asked;
  return header ?? undefined;
}

/**
 * What keeps `body` from being a `JSONRPCRequest` (see {@link requestEnvelope}),
 * said for the client: the first member that is wrong (`jsonrpc`, then a
 * `result` or `error` member, then `method`, `id`, `params`).
 */
export function envelopeProblem(body: unknown): string {
  if (body === null || typeof body !== 'object') return 'the body must be a JSON object';
  const { jsonrpc, id, method } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  for (const member of ['result', 'error'])
    if (member in body)
      return `a request has no ${member} member (JSON-RPC 2.0 §4): with one it is a response, which a client does not send`;
  if (typeof method !== 'string') return 'method must be a string';
  if (typeof id === 'number' && Number.isInteger(id) && !Number.isSafeInteger(id))
    return 'id is an integer beyond ±(2^53 − 1), which cannot be sent back exactly: use a smaller one or a string';
  if (typeof id !== 'string' && typeof id !== 'number') return 'id must be a string or an integer';
  if (typeof id === 'string' && !isAnswerableId(id))
    return 'id is not well-formed Unicode (a lone surrogate), which a client cannot read back as its own: use another string';
  // 1e400 parses as Infinity: too large, as 2^53 is, not a fraction.
  if (typeof id === 'number' && !Number.isFinite(id))
    return 'id is a number beyond ±(2^53 − 1), which cannot be sent back exactly: use a smaller one or a string';
  if (typeof id === 'number' && !Number.isInteger(id))
    return 'id must be an integer or a string, not a fraction';
  return 'params must be an object';
}
