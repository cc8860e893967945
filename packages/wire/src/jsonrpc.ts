import { z } from 'zod';

/** JSON-RPC 2.0 request id: a string or an integer (MCP forbids `null`). */
export const RequestIdSchema = z.union([z.string(), z.number().int()]);
/** JSON-RPC 2.0 request id: a string or an integer. */
export type RequestId = z.infer<typeof RequestIdSchema>;

/**
 * A JSON-RPC 2.0 request (JSON-RPC 2.0 §4): `{jsonrpc: "2.0", id, method, params?}`.
 * `params`, when present, must be an object: MCP never sends positional params.
 */
export const JSONRPCRequestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema,
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});
/** A JSON-RPC 2.0 request whose `params` are not yet validated. */
export type JSONRPCRequest = z.infer<typeof JSONRPCRequestSchema>;

/** A JSON-RPC 2.0 notification (JSON-RPC 2.0 §4.1): a request without `id`. */
export const JSONRPCNotificationSchema = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});
/** A JSON-RPC 2.0 notification. */
export type JSONRPCNotification = z.infer<typeof JSONRPCNotificationSchema>;

/** The `error` member of a JSON-RPC 2.0 error response (JSON-RPC 2.0 §5.1). */
export const JSONRPCErrorObjectSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
/** The `error` member of a JSON-RPC 2.0 error response. */
export type JSONRPCErrorObject = z.infer<typeof JSONRPCErrorObjectSchema>;

/** A JSON-RPC 2.0 success response carrying `result`. */
export interface JSONRPCResultResponse<R = Record<string, unknown>> {
  jsonrpc: '2.0';
  id: RequestId;
  result: R;
}

/** A JSON-RPC 2.0 error response; `id` is absent when the request id could not be read. */
export interface JSONRPCErrorResponse {
  jsonrpc: '2.0';
  id?: RequestId;
  error: JSONRPCErrorObject;
}

/** Either JSON-RPC 2.0 response form. */
export type JSONRPCResponse<R = Record<string, unknown>> =
  | JSONRPCResultResponse<R>
  | JSONRPCErrorResponse;
