/**
 * The retry fields of a `tools/call` as MCP 2026-07-28 `CallToolRequest`
 * types them: `inputResponses` a JSON object of JSON objects, `requestState`
 * a string. The SDK reads some malformed values (`null`) as absent, which
 * would ask the question again instead of saying what is wrong; the wording
 * is `@mrtr/server`'s.
 */

/** What is wrong with one retry field: the `-32602` message and its `data`. */
export interface RetryFieldsProblem {
  message: string;
  param: string;
  problem: string;
}

/**
 * Why the retry fields of tools/call `params` are malformed, or `undefined`
 * (also for params that are no object: the SDK refuses those itself).
 */
export function retryFieldsProblem(params: unknown): RetryFieldsProblem | undefined {
  if (params === null || typeof params !== 'object') return undefined;
  const { inputResponses, requestState } = params as Record<string, unknown>;
  const refuse = (param: string, problem: string) => ({
    message: `Invalid tools/call params: ${param} ${problem}`,
    param,
    problem,
  });
  if (inputResponses !== undefined) {
    if (!isJsonObject(inputResponses)) return refuse('inputResponses', 'must be a JSON object');
    for (const [key, value] of Object.entries(inputResponses))
      if (!isJsonObject(value))
        return refuse(`inputResponses.${clip(key.toWellFormed())}`, 'must be a JSON object');
  }
  if (requestState !== undefined && typeof requestState !== 'string')
    return refuse('requestState', 'must be a string');
  return undefined;
}

/**
 * The `-32602` response to a 2026-07-28 `tools/call` body whose retry fields
 * are malformed, or `undefined` for any other body (not JSON, another method,
 * well-formed fields). Status 200, as `@mrtr/server` answers invalid params.
 */
export function retryFieldsRefusal(body: unknown): Response | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { method, params, id } = body as Record<string, unknown>;
  if (method !== 'tools/call') return undefined;
  const problem = retryFieldsProblem(params);
  if (problem === undefined) return undefined;
  const known = typeof id === 'string' || Number.isSafeInteger(id) ? { id } : {};
  const error = {
    code: -32602,
    message: problem.message,
    data: { param: problem.param, problem: problem.problem },
  };
  return Response.json({ jsonrpc: '2.0', ...known, error });
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** At most 64 code units of a member name a client chose, for a message. */
function clip(text: string): string {
  return text.length <= 64 ? text : `${text.slice(0, 64).toWellFormed()}…`;
}
