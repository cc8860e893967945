import { z } from 'zod';
import {
  type JSONRPCErrorObject,
  JSONRPCErrorObjectSchema,
  type JSONRPCErrorResponse,
  type RequestId,
  RequestIdSchema,
} from './jsonrpc.js';
import { type ClientCapabilities, ClientCapabilitiesSchema } from './meta.js';

/**
 * JSON-RPC error codes used by MCP 2026-07-28: the JSON-RPC 2.0 §5.1 codes and
 * the protocol-defined codes of `basic/index` ("Error Codes").
 */
export const ErrorCode = Object.freeze({
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
} as const);
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

/** An error object whose `code` is fixed, as the schema's `ParseError` etc. are. */
function codedError<C extends number>(code: C) {
  return JSONRPCErrorObjectSchema.extend({ code: z.literal(code) });
}
/** `ParseError` (`-32700`): the error object for a body that is not JSON. */
export const ParseErrorSchema = codedError(ErrorCode.ParseError);
/** `InvalidRequestError` (`-32600`): not a single valid JSON-RPC request. */
export const InvalidRequestErrorSchema = codedError(ErrorCode.InvalidRequest);
/** `MethodNotFoundError` (`-32601`); on HTTP it travels with status 404. */
export const MethodNotFoundErrorSchema = codedError(ErrorCode.MethodNotFound);
/** `InvalidParamsError` (`-32602`): unknown tool, prompt or resource, bad arguments, bad `_meta`. */
export const InvalidParamsErrorSchema = codedError(ErrorCode.InvalidParams);
/** `InternalError` (`-32603`). */
export const InternalErrorSchema = codedError(ErrorCode.InternalError);

function errorResponseOf<E extends z.ZodType>(error: E) {
  return z.object({ jsonrpc: z.literal('2.0'), id: RequestIdSchema.optional(), error });
}
/** `HeaderMismatchError`: the response for `-32020` (HTTP 400; Streamable HTTP, "Server Validation"). */
export const HeaderMismatchErrorSchema = errorResponseOf(codedError(ErrorCode.HeaderMismatch));
/** `MissingRequiredClientCapabilityError`: the response for `-32021`, `data.requiredCapabilities` naming what is missing (HTTP 400). */
export const MissingRequiredClientCapabilityErrorSchema = errorResponseOf(
  codedError(ErrorCode.MissingRequiredClientCapability).extend({
    data: z.looseObject({ requiredCapabilities: ClientCapabilitiesSchema }),
  }),
);
/** `UnsupportedProtocolVersionError`: the response for `-32022`, `data` echoing `requested` and listing `supported` (HTTP 400). */
export const UnsupportedProtocolVersionErrorSchema = errorResponseOf(
  codedError(ErrorCode.UnsupportedProtocolVersion).extend({
    data: z.looseObject({ requested: z.string(), supported: z.array(z.string()) }),
  }),
);

/**
 * The `-32022` UnsupportedProtocolVersion error object (`basic/versioning`,
 * "Protocol Version Negotiation").
 * @param requested the version the client asked for
 * @param supported the versions this server implements
 */
export function unsupportedVersionError(
  requested: string,
  supported: readonly string[],
): JSONRPCErrorObject {
  return {
    code: ErrorCode.UnsupportedProtocolVersion,
    message: `Unsupported protocol version: ${requested}`,
    data: { requested, supported: [...supported] },
  };
}

/**
 * The `-32020` HeaderMismatch error object; `message` says which header and why.
 */
export function headerMismatchError(message: string): JSONRPCErrorObject {
  return { code: ErrorCode.HeaderMismatch, message: `Header mismatch: ${message}` };
}

/** The brand every {@link McpError} carries, registered globally so every copy of this package shares it. */
const MCP_ERROR = Symbol.for('@mrtr/wire/McpError');

/**
 * An error thrown inside a request handler that the endpoint turns into a
 * JSON-RPC error response with the given code, message and data.
 *
 * `instanceof McpError` tests a brand (`Symbol.for('@mrtr/wire/McpError')`),
 * not the prototype chain: an error thrown by another copy of this package
 * (an ESM gate next to a CommonJS server, two installed versions) is still
 * recognised, so it still becomes its JSON-RPC error instead of `-32603`.
 */
export class McpError extends Error {
  override readonly name = 'McpError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    Object.defineProperty(this, MCP_ERROR, { value: true });
  }

  /** Brand check behind `instanceof`: any object carrying the brand, from any copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && MCP_ERROR in value;
  }

  /** The JSON-RPC `error` member this error becomes on the wire. */
  toErrorObject(): JSONRPCErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
