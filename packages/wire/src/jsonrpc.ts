import { z } from 'zod';

/** JSON-RPC 2.0 request id: a string or an integer (MCP forbids `null`). Schema type `RequestId`. */
export const RequestIdSchema = z.union([z.string(), z.number().int()]);
/** JSON-RPC 2.0 request id: a string or an integer. */
export type RequestId = z.infer<typeof RequestIdSchema>;

/** A JSON object with any members (schema type `JSONObject`). */
export const JSONObjectSchema = z.record(z.string(), z.unknown());
/** A JSON object with any members. */
export type JSONObject = z.infer<typeof JSONObjectSchema>;

/**
 * `JSONRPCRequest` (JSON-RPC 2.0 §4): `{jsonrpc: "2.0", id, method, params?}`.
 * `params`, when present, must be an object: MCP never sends positional params.
 */
export const JSONRPCRequestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema,
  method: z.string(),
  params: JSONObjectSchema.optional(),
});
/** A JSON-RPC 2.0 request whose `params` are not yet validated. */
export type JSONRPCRequest = z.infer<typeof JSONRPCRequestSchema>;

/** `JSONRPCNotification` (JSON-RPC 2.0 §4.1): a request without `id`, never answered. */
export const JSONRPCNotificationSchema = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.string(),
  params: JSONObjectSchema.optional(),
});
/** A JSON-RPC 2.0 notification. */
export type JSONRPCNotification = z.infer<typeof JSONRPCNotificationSchema>;

/** `Error`: the `error` member of a JSON-RPC 2.0 error response (JSON-RPC 2.0 §5.1). */
export const JSONRPCErrorObjectSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
/** The `error` member of a JSON-RPC 2.0 error response. */
export type JSONRPCErrorObject = z.infer<typeof JSONRPCErrorObjectSchema>;

/**
 * `JSONRPCResultResponse`: `{jsonrpc: "2.0", id, result}` where `result` is an
 * object carrying `resultType` (`basic/index`, "Result Responses").
 */
export const JSONRPCResultResponseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema,
  result: z.looseObject({ resultType: z.string() }),
});
/** A JSON-RPC 2.0 success response carrying `result`. */
export interface JSONRPCResultResponse<R = Record<string, unknown>> {
  jsonrpc: '2.0';
  id: RequestId;
  result: R;
}

/**
 * `JSONRPCErrorResponse`: `{jsonrpc: "2.0", id?, error}`; `id` is absent only
 * when the request id could not be read (malformed request).
 */
export const JSONRPCErrorResponseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema.optional(),
  error: JSONRPCErrorObjectSchema,
});
/** A JSON-RPC 2.0 error response; `id` is absent when the request id could not be read. */
export interface JSONRPCErrorResponse {
  jsonrpc: '2.0';
  id?: RequestId;
  error: JSONRPCErrorObject;
}

/** `JSONRPCResponse`: either response form. */
export const JSONRPCResponseSchema = z.union([
  JSONRPCResultResponseSchema,
  JSONRPCErrorResponseSchema,
]);
/** Either JSON-RPC 2.0 response form. */
export type JSONRPCResponse<R = Record<string, unknown>> =
  | JSONRPCResultResponse<R>
  | JSONRPCErrorResponse;

/** `JSONRPCMessage`: any single message; MCP 2026-07-28 has no batches. */
export const JSONRPCMessageSchema = z.union([
  JSONRPCRequestSchema,
  JSONRPCNotificationSchema,
  JSONRPCResultResponseSchema,
  JSONRPCErrorResponseSchema,
]);
/** Any single JSON-RPC 2.0 message. */
export type JSONRPCMessage =
  | JSONRPCRequest
  | JSONRPCNotification
  | JSONRPCResultResponse
  | JSONRPCErrorResponse;
