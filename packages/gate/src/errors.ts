import { CanonicalizeError, canonicalize } from '@mrtr/digest';
import { ReplayStoreUnavailableError } from '@mrtr/replay';
import { ErrorCode, McpError, serviceUnavailable } from '@mrtr/wire';
import { AuditSinkError } from './audit.js';
import type { RefusalReason } from './reasons.js';
import type { GateRequest } from './types.js';

/** A refusal as the JSON-RPC error it is, with its reason code in `data.reason`. */
export function refusal(code: number, reason: RefusalReason, message: string): McpError {
  return new McpError(code, message, { reason });
}

/**
 * The RFC 8785 text of the arguments, whose digest the ticket binds.
 * Arguments JSON cannot carry exactly (a lone surrogate from a `\ud800`
 * escape, nesting past the canonicalizer's limit) are the caller's error:
 * `-32602`, before anything else happens.
 */
export function canonicalArgumentsOf(request: GateRequest): string {
  try {
    return canonicalize(request.arguments);
  } catch (error) {
    if (error instanceof CanonicalizeError) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `arguments cannot be confirmed: ${error.code.replace(/_/g, ' ')} at ${error.path || '/'}`,
      );
    }
    throw error;
  }
}

/**
 * The RFC 8785 text of `value`, or `undefined` when JSON cannot carry it
 * exactly (a lone surrogate, a number that is not finite, nesting past the limit).
 */
export function canonicalOrUndefined(value: unknown): string | undefined {
  try {
    return canonicalize(value);
  } catch (error) {
    if (error instanceof CanonicalizeError) return undefined;
    throw error;
  }
}

/**
 * The store of the gate's `ApprovalChannel` cannot be reached (or holds a row
 * it cannot read): always before the claim, so nothing was changed. The
 * channel's error is the `cause`.
 */
export class ApprovalChannelError extends Error {
  override readonly name = 'ApprovalChannelError';
}

/**
 * Whether a channel's error says its store is out of reach: an
 * `ApprovalStoreUnavailableError` of `@mrtr/approval-page` (by its `code`
 * or name: this package does not depend on that one), or an error
 * `serviceUnavailable` of `@mrtr/wire` reads as an outage. Any other throw
 * (a `TypeError` for an approval the store refuses) is no outage and is not
 * worded as one.
 */
function channelUnavailable(error: unknown): boolean {
  if (error instanceof Error) {
    const { code } = error as { code?: unknown };
    if (code === 'APPROVAL_STORE_UNAVAILABLE' || error.name === 'ApprovalStoreUnavailableError')
      return true;
  }
  return serviceUnavailable(error) !== undefined;
}

/** `call` of the approval channel; a failure of its store is thrown as an {@link ApprovalChannelError}. */
export async function fromChannel<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!channelUnavailable(error)) throw error;
    throw new ApprovalChannelError('the store of approvals is unavailable', { cause: error });
  }
}

const RECEIPTISSUERERROR_BRAND = Symbol.for('@mrtr/gate/ReceiptIssuerError');

/**
 * Thrown by `ConfirmationGate.run` (as the `cause` of its JSON-RPC error
 * `-32603`, HTTP 503 on `@mrtr/server`) when the gate's `receipts` issuer
 * failed: inside the claim and before `perform`, so the claim was given back
 * and nothing was changed; the approval stays usable for a retry. `cause` is
 * the issuer's own error. Recognised by brand, as {@link AuditSinkError}.
 */
export class ReceiptIssuerError extends Error {
  override readonly name = 'ReceiptIssuerError';
  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    Object.defineProperty(this, RECEIPTISSUERERROR_BRAND, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && RECEIPTISSUERERROR_BRAND in value;
  }
}

/** The `name` of an error, for records and spans. */
export function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'unknown_error';
}

/**
 * The JSON-RPC error a failure becomes. A replay store that cannot be
 * reached, an approval channel, a receipt issuer or an audit sink that failed, gets `-32603` with a message the
 * caller can act on instead of the server's generic internal error. It
 * speaks of this request ("This request changed nothing"): an earlier one may
 * have carried the confirmation out, which the retry then returns. Errors
 * are recognised by brand or name, not prototype: another copy of a package
 * in the process throws its own classes.
 */
export function toMcpError(
  error: unknown,
  settled: { performed: boolean; replayed: boolean; declined: boolean; declining?: boolean } = {
    performed: false,
    replayed: false,
    declined: false,
  },
): unknown {
  const { performed, replayed, declined, declining } = settled;
  if (error instanceof McpError) return error;
  if (isStoreUnavailable(error) && declining)
    return withCause(
      new McpError(
        ErrorCode.InternalError,
        isOutcomeUnknown(error)
          ? 'The store that keeps each confirmation single-use stopped answering while this decline was being recorded: it may or may not have been recorded. A decline carries nothing out. Send the same answer again to learn which (if an earlier answer used this confirmation, you are told so).'
          : 'This request changed nothing: the store that keeps each confirmation single-use is unavailable, so this decline could not be recorded. A decline carries nothing out. Send the same answer again later (if an earlier answer used this confirmation, you are told so).',
      ),
      error,
    );
  if (isStoreUnavailable(error))
    return withCause(
      isOutcomeUnknown(error)
        ? new McpError(
            ErrorCode.InternalError,
            'The store that keeps each confirmation single-use stopped answering while the operation was being committed: it was carried out once or not at all. Send the same confirmation again before it expires: it returns the result if it was carried out, and carries it out if not. Once it has expired it can tell neither: look at the target before calling the tool again.',
          )
        : new McpError(
            ErrorCode.InternalError,
            'This request changed nothing: the store that keeps each confirmation single-use is unavailable. Retry the same confirmation later: it still runs at most once, and returns its result if an earlier request carried it out.',
          ),
      error,
    );
  if (error instanceof ApprovalChannelError)
    return withCause(
      new McpError(
        ErrorCode.InternalError,
        'This request changed nothing: the store of approvals on the server’s page is unavailable. Retry the same request later.',
      ),
      // The channel's error, whose own cause is the store's: what failed is named, down to why.
      error,
    );
  if (error instanceof ReceiptIssuerError)
    return withCause(
      new McpError(
        ErrorCode.InternalError,
        'This request changed nothing: the server could not sign the approval receipt this operation needs. Retry the same confirmation later: it still runs at most once.',
      ),
      error,
    );
  if (error instanceof AuditSinkError)
    return withCause(
      new McpError(ErrorCode.InternalError, auditFailureMessage(performed, replayed, declined)),
      error,
    );
  return error;
}

/** What an audit sink that failed means for the caller, by what the nonce holds by then. */
function auditFailureMessage(performed: boolean, replayed: boolean, declined: boolean): string {
  if (declined && (performed || replayed))
    return 'The decline was recorded, but its audit record could not be written. Sending it again returns the same answer; nothing runs.';
  if (performed)
    return 'The operation was carried out, but its audit record could not be written. Retrying the same confirmation returns its result without repeating it.';
  if (replayed)
    return 'An earlier request carried out this confirmation; the audit record of this re-send could not be written. Send it again later for its result: it is not repeated.';
  return 'This request changed nothing: the audit trail could not be written. Retry the same request later.';
}

/**
 * The `ReplayStoreUnavailableError` `error` is or wraps (its `cause` chain,
 * at most 8 deep): a store of `perform`'s own that failed (an executor's
 * receipt claim, `ReceiptError` `store_unavailable` of `@mrtr/receipt`) is
 * an outage as the gate's store is, and its transaction rolled back with
 * the gate's.
 */
function storeFailureOf(error: unknown): { outcomeUnknown?: unknown } | undefined {
  let e = error;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    if (e instanceof ReplayStoreUnavailableError || isNamed(e, 'ReplayStoreUnavailableError'))
      return e as { outcomeUnknown?: unknown };
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function isStoreUnavailable(error: unknown): boolean {
  return storeFailureOf(error) !== undefined;
}

/**
 * A replay store that lost its connection waiting for `COMMIT`'s answer: the
 * transaction, and a `completed` record written in it, may have committed.
 */
export function isOutcomeUnknown(error: unknown): boolean {
  return storeFailureOf(error)?.outcomeUnknown === true;
}

/** `error` with `cause` set (ES2022 `Error.cause`), for logs; never sent on the wire. */
function withCause(error: McpError, cause: unknown): McpError {
  Object.defineProperty(error, 'cause', { value: cause, enumerable: false, configurable: true });
  return error;
}

function isNamed(error: unknown, name: string): boolean {
  return error instanceof Error && error.name === name;
}
