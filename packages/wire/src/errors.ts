import type { JSONRPCErrorObject, JSONRPCErrorResponse, RequestId } from './jsonrpc.js';
import type { ClientCapabilities } from './meta.js';

/**
 * JSON-RPC error codes used by MCP 2026-07-28: the JSON-RPC 2.0 §5.1 codes and
 * the protocol-defined codes of `basic/index` ("Error Codes").
 */
export const ErrorCode = {
  /** Invalid JSON was received (JSON-RPC 2.0). */
  ParseError: -32700,
  /** The JSON sent is not a valid request object (JSON-RPC 2.0). */
  InvalidRequest: -32600,
  /** The method does not exist or is not available (JSON-RPC 2.0). */
  MethodNotFound: -32601,
  /** Invalid method parameters (JSON-RPC 2.0). */
  InvalidParams: -32602,
  /** Internal JSON-RPC error (JSON-RPC 2.0). */
  InternalError: -32603,
  /** HTTP headers disagree with the body, or are missing (Streamable HTTP, "Server Validation"). */
  HeaderMismatch: -32020,
  /** The request needs a client capability it did not declare in its `_meta`. */
  MissingRequiredClientCapability: -32021,
  /** The requested protocol version is not supported by this server. */
  UnsupportedProtocolVersion: -32022,
} as const;
/** One of the {@link ErrorCode} values. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * Build a JSON-RPC 2.0 error response.
 * @param id the request id, or `undefined` when it could not be read (the member is then omitted).
 * @returns `{jsonrpc: "2.0", id?, error: {code, message, data?}}`
 */
export function errorResponse(
  id: RequestId | undefined,
  code: number,
  message: string,
  data?: unknown,
): JSONRPCErrorResponse {
  const error: JSONRPCErrorObject =
    data === undefined ? { code, message } : { code, message, data };
  return id === undefined ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', id, error };
}

/**
 * The `-32021` MissingRequiredClientCapability error object, whose
 * `data.requiredCapabilities` names what the client must declare to be served.
 */
export function missingCapabilityError(
  requiredCapabilities: ClientCapabilities,
  message = 'This request requires a client capability that was not declared in _meta',
): JSONRPCErrorObject {
  return {
    code: ErrorCode.MissingRequiredClientCapability,
    message,
    data: { requiredCapabilities },
  };
}

/**
 * An error thrown inside a request handler that the endpoint turns into a
 * JSON-RPC error response with the given code, message and data.
 */
export class McpError extends Error {
  override readonly name = 'McpError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  /** The JSON-RPC `error` member this error becomes on the wire. */
  toErrorObject(): JSONRPCErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
