import {
  type CallToolResult,
  type InputRequiredResult,
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
} from '@modelcontextprotocol/server';
import {
  databaseRefusal,
  McpError,
  serviceUnavailable,
  type CallToolResult as WireCallToolResult,
  type InputRequiredResult as WireInputRequiredResult,
} from '@mrtr/wire';

/** What a gated tool answers, in the SDK's types. */
export type SdkToolResult = CallToolResult | InputRequiredResult;

/**
 * A gate result in the SDK's shapes: a complete result without its
 * `resultType` (the SDK's 2026-07-28 codec stamps it), an `input_required`
 * one as it is.
 */
export function toSdkResult(
  result: WireCallToolResult | Omit<WireInputRequiredResult, 'requestState'>,
): SdkToolResult {
  // The SDK types a URL-mode request with the 2025 `elicitationId`, which the 2026-07-28 in-band
  // request has not (the SDK's shim adds one); its own guard is the honest narrowing.
  if (isInputRequiredResult(result)) return result;
  if (result.resultType !== 'complete') throw new TypeError('unexpected result');
  const { resultType: _complete, ...complete } = result;
  return complete;
}

/**
 * The JSON-RPC error a gated call answers: an `McpError` of the gate keeps
 * its code, message and `data` (one of code `-32603`, the gate's own fault
 * such as an unreachable replay store, is reported with its `cause`); an SDK `ProtocolError` thrown by the tool's
 * own code passes as it is; a database refusing a value of the request
 * (`databaseRefusal` of `@mrtr/wire`: SQLSTATE 22001, 23505, …) becomes
 * `-32602` with `data.sqlstate`, as on `@mrtr/server`; anything else is
 * reported and becomes `-32603`: for a database or service that cannot be
 * reached, with the message of `serviceUnavailable` of `@mrtr/wire`;
 * otherwise "Internal error" without detail.
 */
export function toProtocolError(error: unknown, report: (error: unknown) => void): ProtocolError {
  const tell = (e: unknown) => reportSafely(report, e);
  try {
    if (error instanceof McpError) {
      // The gate's -32603 is a fault of the server side (an unreachable replay store, a failed
      // audit sink): the client is told little, so the operator must hear of it and its cause.
      if (error.code === ProtocolErrorCode.InternalError) tell(error);
      return new ProtocolError(error.code, error.message, error.data);
    }
    if (error instanceof ProtocolError) return error;
  } catch {
    // An error that throws as it is read (a getter, a Proxy) is no McpError: reported below.
  }
  tell(error);
  // A database refusing a value of the request is the caller's error, as on @mrtr/server.
  const refused = databaseRefusal(error);
  if (refused) return new ProtocolError(refused.code, refused.message, refused.data);
  // A database or service that cannot be reached: say so (still -32603), never its own text.
  const unavailable = serviceUnavailable(error);
  if (unavailable) return new ProtocolError(unavailable.code, unavailable.message);
  return new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error');
}

/** `report(error)`, whose own failure must not change what the client is answered. */
function reportSafely(report: (error: unknown) => void, error: unknown): void {
  try {
    report(error);
  } catch {
    // A reporter that throws loses this report only.
  }
}
