/**
 * The params of a `tools/call` and of list requests as MCP types them,
 * checked before the SDK reads them: `arguments` a JSON object when present
 * (`CallToolRequestParams`, every revision), the 2026-07-28 retry fields
 * (`inputResponses` a JSON object of JSON objects, `requestState` a
 * string), a list request's `cursor` a string. The SDK reads some malformed
 * values (`null` retry fields) as absent, which would ask the question again
 * instead of saying what is wrong, answers others with its raw zod issues as
 * the message (`arguments`), or as its own fault (`-32603`, `cursor`); it
 * takes the retry fields out of `params` before any handler sees them, so
 * the checks read the body. The wording is `@mrtr/server`'s.
 */

import { isJsonContentType, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { retryFieldsProblem, shownText } from '@mrtr/wire';

/** The revision whose `tools/call` carries retry fields. */
const MODERN_REVISION = '2026-07-28';

/**
 * The `-32602` response to a 2026-07-28 `tools/call` request whose
 * `params.arguments` is present but not a JSON object (`[1]`, `null`, `"x"`,
 * `5`), or whose retry fields are malformed, or `undefined` for any other:
 * not JSON, another method, well-formed params (an absent `arguments`
 * included), or a request the SDK refuses on other grounds,
 * which it answers itself (a notification, an id that is no `RequestId`, a
 * `jsonrpc` other than `2.0`, no `_meta`, an `Mcp-Name` or
 * `MCP-Protocol-Version` header that does not match, a media type other than
 * JSON). Status 200, as `@mrtr/server` answers invalid params, with the
 * same `error.data`: `{ path, param, problem }`, `path` the member dotted
 * from the request (`params.inputResponses.confirm`) as every `-32602` of
 * `@mrtr/server` names it, `param` the same without `params.` (what this
 * bridge sent alone before; kept for clients that read it), `problem` the
 * rule it breaks (`must be a JSON object`, `must be a string`). `arguments`
 * is checked first, as `@mrtr/server` checks it: message "Invalid tools/call
 * params: arguments must be a JSON object", `data` `{ path:
 * 'params.arguments', param: 'arguments', problem: 'must be a JSON object' }`
 * (the SDK answered `-32602` with its zod issues as the message). A `name`
 * that is missing or not a string is refused before the rest, with HTTP 400
 * as `@mrtr/server` does: "Invalid params: params.name must be a string",
 * `data` `{ path: 'params.name', param: 'name', problem: 'must be a string' }`.
 */
export function retryFieldsRefusal(request: Request, body: unknown): Response | undefined {
  const served = servedAsIs(request, body);
  if (!served || served.method !== 'tools/call') return undefined;
  const { id, params } = served;
  const { name, _meta: meta } = params;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return undefined;
  // No header can match a name that is not text: the params are wrong, as `@mrtr/server` says
  // (the SDK answered with its zod issues as the message, newlines and all).
  if (typeof name !== 'string') return invalidName(id);
  if (request.headers.get('mcp-name') !== name) return undefined;
  return invalidCallParams(id, argumentsProblem(params) ?? retryFieldsProblem(params));
}

/** `@mrtr/server`'s `-32602` (HTTP 400) for a `tools/call` whose `params.name` is missing or not a string. */
function invalidName(id: string | number): Response {
  const error = {
    code: -32602,
    message: 'Invalid params: params.name must be a string',
    data: { path: 'params.name', param: 'name', problem: 'must be a string' },
  };
  return Response.json({ jsonrpc: '2.0', id, error }, { status: 400 });
}

/** `arguments` present and not a JSON object (`CallToolRequestParams.arguments`), else `undefined`. */
function argumentsProblem(
  params: Record<string, unknown>,
): { param: 'arguments'; problem: 'must be a JSON object' } | undefined {
  const args = params.arguments;
  if (args === undefined || (args !== null && typeof args === 'object' && !Array.isArray(args)))
    return undefined;
  return { param: 'arguments', problem: 'must be a JSON object' };
}

/** The `-32602` of a `tools/call` whose `problem.param` breaks `problem.problem`, with `id`; none without a problem. */
function invalidCallParams(
  id: string | number,
  problem: { param: string; problem: string } | undefined,
): Response | undefined {
  if (problem === undefined) return undefined;
  // A member name is the client's text: shown as `@mrtr/server` shows it (controls as U+FFFD, cut).
  const param = shownText(problem.param, 64);
  const error = {
    code: -32602,
    message: `Invalid tools/call params: ${param} ${problem.problem}`,
    data: { path: `params.${param}`, param, problem: problem.problem },
  };
  return Response.json({ jsonrpc: '2.0', id, error });
}

/** The 2026-07-28 methods that page their results with `params.cursor`. */
export const PAGED_METHODS: ReadonlySet<string> = new Set([
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
]);

/**
 * The `-32602` response to a 2026-07-28 list request whose `params.cursor`
 * is present but not a string (`PaginatedRequestParams`), or `undefined` for
 * any other. The SDK's own parse of it ends in `-32603` with the zod issues
 * as the message: an internal error for the client's mistake. `error.data`
 * is `{ path: 'params.cursor', param: 'cursor', problem: 'must be a string' }`
 * (see {@link retryFieldsRefusal} for its members).
 */
export function cursorRefusal(request: Request, body: unknown): Response | undefined {
  const served = servedAsIs(request, body);
  if (!served) return undefined;
  // Only what the SDK would otherwise serve: its own refusals (headers, media type) come first.
  if (request.headers.get('mcp-method') !== served.method) return undefined;
  return badCursor(served);
}

/**
 * The `-32602` response to a request on a 2025-era session whose params
 * break a rule every revision shares, with the request's id, or `undefined`
 * for any other:
 *
 * - a `tools/call` whose `params.arguments` is present but not a JSON object
 *   (`CallToolRequestParams` of 2025-11-25 and earlier types it as one):
 *   the `error` of {@link retryFieldsRefusal} for `arguments`. The SDK's
 *   session answered `-32602` with its zod issues as the message. Its retry
 *   fields are not read here: on a session they are refused whatever their
 *   type (`retry_fields_on_session`, by the router).
 * - a list request whose `params.cursor` is present but not a string
 *   (`PaginatedRequestParams`): the `error` of {@link cursorRefusal}. The
 *   SDK's session answered `-32603` with its zod issues as the message.
 *
 * The caller has already matched the session to its owner; the SDK
 * transport's own refusals (an `Accept` without both JSON and SSE, a media
 * type other than JSON, an `MCP-Protocol-Version` it does not support, a
 * batch) are left to it.
 */
export function legacyParamsRefusal(request: Request, body: unknown): Response | undefined {
  const served = jsonRpcRequestOf(body);
  if (!served) return undefined;
  const headers = request.headers;
  const accept = headers.get('accept') ?? '';
  const version = headers.get('mcp-protocol-version');
  if (
    !accept.includes('application/json') ||
    !accept.includes('text/event-stream') ||
    !isJsonContentType(headers.get('content-type') ?? '') ||
    (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
  )
    return undefined;
  if (served.method === 'tools/call')
    return invalidCallParams(served.id, argumentsProblem(served.params));
  return badCursor(served);
}

/** The `-32602` of a paged request whose cursor is present and not a string, else `undefined`. */
function badCursor({ id, method, params }: JsonRpcRequest): Response | undefined {
  if (!PAGED_METHODS.has(method)) return undefined;
  if (params.cursor === undefined || typeof params.cursor === 'string') return undefined;
  const error = {
    code: -32602,
    message: `Invalid ${method} params: cursor must be a string`,
    data: { path: 'params.cursor', param: 'cursor', problem: 'must be a string' },
  };
  return Response.json({ jsonrpc: '2.0', id, error });
}

interface JsonRpcRequest {
  id: string | number;
  method: string;
  params: Record<string, unknown>;
}

/**
 * The parts of `body` when it is one JSON-RPC 2.0 request (not a batch) with
 * an id that is a `RequestId` (a string or a safe integer) and object
 * `params`, else `undefined`.
 */
function jsonRpcRequestOf(body: unknown): JsonRpcRequest | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { jsonrpc, method, params, id } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0' || typeof method !== 'string') return undefined;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return undefined;
  return { id: id as string | number, method, params: params as Record<string, unknown> };
}

/**
 * The parts of `body` when it is a JSON-RPC request the SDK would serve as
 * it stands (an id that is a `RequestId`, object `params`, sent as JSON
 * under `MCP-Protocol-Version: 2026-07-28`), else `undefined`: the SDK
 * answers the rest itself.
 */
function servedAsIs(request: Request, body: unknown): JsonRpcRequest | undefined {
  const served = jsonRpcRequestOf(body);
  if (!served) return undefined;
  const headers = request.headers;
  if (
    headers.get('mcp-protocol-version') !== MODERN_REVISION ||
    !isJsonContentType(headers.get('content-type') ?? '')
  )
    return undefined;
  return served;
}
