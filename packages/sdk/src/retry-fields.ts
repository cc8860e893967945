/**
 * The retry fields of a `tools/call` as MCP 2026-07-28 `CallToolRequest`
 * types them: `inputResponses` a JSON object of JSON objects, `requestState`
 * a string. The SDK reads some malformed values (`null`) as absent, which
 * would ask the question again instead of saying what is wrong, and takes
 * both out of `params` before any handler sees them, so the check reads the
 * body; the wording is `@mrtr/server`'s.
 */

import { isJsonContentType, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { retryFieldsProblem, shownText } from '@mrtr/wire';

/** The revision whose `tools/call` carries retry fields. */
const MODERN_REVISION = '2026-07-28';

/**
 * The `-32602` response to a 2026-07-28 `tools/call` request whose retry
 * fields are malformed, or `undefined` for any other: not JSON, another
 * method, well-formed fields, or a request the SDK refuses on other grounds,
 * which it answers itself (a notification, an id that is no `RequestId`, a
 * `jsonrpc` other than `2.0`, no `_meta` or `name`, an `Mcp-Name` or
 * `MCP-Protocol-Version` header that does not match, a media type other than
 * JSON). Status 200, as `@mrtr/server` answers invalid params, with the
 * same `error.data`: `{ path, param, problem }`, `path` the member dotted
 * from the request (`params.inputResponses.confirm`) as every `-32602` of
 * `@mrtr/server` names it, `param` the same without `params.` (what this
 * bridge sent alone before; kept for clients that read it), `problem` the
 * rule it breaks (`must be a JSON object`, `must be a string`).
 */
export function retryFieldsRefusal(request: Request, body: unknown): Response | undefined {
  const served = servedAsIs(request, body);
  if (!served || served.method !== 'tools/call') return undefined;
  const { id, params } = served;
  const { name, _meta: meta } = params;
  if (typeof name !== 'string' || meta === null || typeof meta !== 'object' || Array.isArray(meta))
    return undefined;
  if (request.headers.get('mcp-name') !== name) return undefined;
  const problem = retryFieldsProblem(params);
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
 * The `-32602` response to a list request on a 2025-era session whose
 * `params.cursor` is present but not a string (`PaginatedRequestParams` of
 * 2025-11-25 and earlier types it as a string too), with the request's id
 * and the `error.data` of {@link cursorRefusal}, or `undefined` for any other. The caller has already matched the session
 * to its owner; the SDK transport's own refusals (an `Accept` without both
 * JSON and SSE, a media type other than JSON, an `MCP-Protocol-Version` it
 * does not support, a batch) are left to it. Without this the SDK's session
 * answers `-32603` with the zod issues as the message, as on 2026-07-28.
 */
export function legacyCursorRefusal(request: Request, body: unknown): Response | undefined {
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
