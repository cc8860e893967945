/**
 * Typed views of the replies the scenarios read, over `@mrtr/spec-schema`'s
 * raw client: every request it sends and every response it receives has
 * already been checked against the official schema.json when these run.
 */
import { type Capabilities, callTool } from '@mrtr/spec-schema';
import { expect } from 'vitest';

/** A complete `CallToolResult`. */
export interface CompleteResult {
  resultType: 'complete';
  content: { type: string; text?: string }[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
}

/** The `elicitation/create` form params of an `InputRequiredResult`. */
export interface FormParams {
  mode: 'form';
  message: string;
  requestedSchema: {
    type: 'object';
    properties: Record<string, { type: string; enum?: string[]; default?: unknown }>;
    required?: string[];
  };
}

/** An `InputRequiredResult`. */
export interface InputRequired {
  resultType: 'input_required';
  inputRequests: Record<string, { method: string; params: FormParams }>;
  requestState: string;
}

/** A JSON-RPC error object. */
export interface RpcError {
  code: number;
  message: string;
  data?: { requiredCapabilities?: unknown };
}

/** A JSON-RPC response to `tools/call`. */
export interface Reply {
  result?: CompleteResult | InputRequired;
  error?: RpcError;
}

/** What round 2 carries besides the arguments. */
export interface Round {
  inputResponses?: Record<string, unknown>;
  requestState?: string;
  capabilities?: Capabilities;
}

/** `tools/call` over HTTP with the raw client (a new JSON-RPC id each time); the response body. */
export async function call(
  url: string,
  token: string,
  tool: string,
  args: Record<string, unknown>,
  round: Round = {},
): Promise<Reply> {
  const { status, body } = await callTool(url, token, tool, args, round);
  expect(body, `HTTP ${status} without a JSON-RPC body`).toBeTypeOf('object');
  return body as Reply;
}

/** The `InputRequiredResult` of `reply`, asking one form under `key`. */
export function asked(reply: Reply, key: string): InputRequired & { form: FormParams } {
  expect(reply.error).toBeUndefined();
  const result = reply.result as InputRequired;
  expect(result?.resultType).toBe('input_required');
  expect(Object.keys(result.inputRequests)).toEqual([key]);
  const request = result.inputRequests[key] as { method: string; params: FormParams };
  expect(request.method).toBe('elicitation/create');
  expect(request.params.mode).toBe('form');
  return { ...result, form: request.params };
}

/** The complete `CallToolResult` of `reply`; `isError` as expected. */
export function completed(reply: Reply, isError = false): CompleteResult {
  expect(reply.error).toBeUndefined();
  const result = reply.result as CompleteResult;
  expect(result?.resultType).toBe('complete');
  expect(result.isError === true).toBe(isError);
  return result;
}

/** The JSON-RPC error of `reply`, with `code`. */
export function failed(reply: Reply, code: number): RpcError {
  expect(reply.result).toBeUndefined();
  expect(reply.error?.code).toBe(code);
  return reply.error as RpcError;
}

/** The text of a result's content. */
export const textOf = (result: CompleteResult): string =>
  result.content.map((c) => c.text ?? '').join('\n');

/**
 * `requestState` with one character of its sealed body changed: still a
 * well-formed string, no longer the ticket the server minted.
 */
export function tamper(ticket: string): string {
  const body = ticket.lastIndexOf('.') + 1;
  const at = body + Math.floor((ticket.length - body) / 2);
  const c = ticket[at] as string;
  return `${ticket.slice(0, at)}${c === 'A' ? 'B' : 'A'}${ticket.slice(at + 1)}`;
}

/** The error codes the scenarios expect. */
export const INVALID_PARAMS = -32602;
export const MISSING_CAPABILITY = -32021;

/** Capabilities that do not include form elicitation. */
export const WITHOUT_FORM: { label: string; capabilities: Capabilities }[] = [
  { label: '{}', capabilities: {} },
  { label: '{elicitation:{url:{}}}', capabilities: { elicitation: { url: {} } } },
];
