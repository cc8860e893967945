import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

/** The gate's failures whose `-32603` advises sending the same confirmation again. */
const CONFIRMATION_FAILURES = new Set([
  'ReplayStoreUnavailableError',
  'ReceiptIssuerError',
  'AuditSinkError',
  'ApprovalChannelError',
]);

/**
 * The failure of `@mrtr/gate` that `error` (the gate's `-32603`) carries as
 * its `cause` chain (at most 8 deep), recognised by name as the gate
 * recognises them: another copy of a package throws its own classes.
 */
function failureOf(error: unknown): { name: string; outcomeUnknown?: unknown } | undefined {
  let e = (error as { cause?: unknown } | undefined)?.cause;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    if (CONFIRMATION_FAILURES.has(e.name)) return e as { name: string; outcomeUnknown?: unknown };
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The gate's `-32603` for a store, receipt, audit or approval failure, told
 * to a 2025-era session. Its advice ("send the same confirmation again")
 * holds on 2026-07-28, where the ticket travels with the retry; on a session
 * the ticket never leaves the server, and a new call asks afresh (about what
 * is left, if the operation was carried out). So the message keeps its first
 * sentence, what happened, and says what the client can do there instead.
 * @returns the refusal to send, or `undefined` for any other error.
 */
export function legacyConfirmationFailure(
  error: unknown,
  refusal: ProtocolError,
): ProtocolError | undefined {
  if (refusal.code !== ProtocolErrorCode.InternalError) return undefined;
  const failure = failureOf(error);
  if (failure === undefined) return undefined;
  const end = refusal.message.indexOf('. ');
  const happened = end === -1 ? refusal.message : refusal.message.slice(0, end + 1);
  const advice = /\bdecline\b/.test(happened)
    ? 'On this session the same answer cannot be sent again; a decline carries nothing out, and calling the tool again asks afresh.'
    : failure.outcomeUnknown === true || !happened.startsWith('This request changed nothing')
      ? 'On this session the same confirmation cannot be sent again, and calling the tool again asks afresh: look at the target first.'
      : 'On this session the same confirmation cannot be sent again: call the tool again later, and you will be asked afresh.';
  return new ProtocolError(refusal.code, `${happened} ${advice}`, refusal.data);
}
