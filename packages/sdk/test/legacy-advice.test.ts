/**
 * The gate's -32603 advice rewritten for a 2025-era session, by the failure
 * it carries as its cause: the ticket never leaves the server there, so "send
 * the same confirmation again" cannot be done. (eras.test.ts runs the store
 * failure end to end with the official client.)
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import { ReplayStoreUnavailableError } from '@mrtr/replay';
import { describe, expect, it } from 'vitest';
import { legacyConfirmationFailure } from '../src/legacy-advice.js';

/** The gate's -32603 with `cause`, as `toMcpError` of `@mrtr/gate` makes it. */
function gateError(message: string, cause: unknown) {
  const error = Object.assign(new Error(message), { code: -32603 });
  Object.defineProperty(error, 'cause', { value: cause });
  return legacyConfirmationFailure(error, new ProtocolError(-32603, message))?.message;
}
const named = (name: string, cause?: unknown) =>
  Object.assign(new Error(name), { name }, cause === undefined ? {} : { cause });

describe('legacyConfirmationFailure', () => {
  it('keeps what happened and says what a session can do, for each failure the gate names', () => {
    const store = new ReplayStoreUnavailableError('down');
    expect(
      gateError(
        'This request changed nothing: the store of approvals on the server’s page is unavailable. Retry the same request later.',
        named('ApprovalChannelError', store),
      ),
    ).toBe(
      'This request changed nothing: the store of approvals on the server’s page is unavailable. On this session the same confirmation cannot be sent again: call the tool again later, and you will be asked afresh.',
    );
    expect(
      gateError(
        'The decline was recorded, but its audit record could not be written. Sending it again returns the same answer; nothing runs.',
        named('AuditSinkError'),
      ),
    ).toMatch(
      /^The decline was recorded, .* a decline carries nothing out, and calling the tool again asks afresh\.$/,
    );
    expect(
      gateError(
        'The operation was carried out, but its audit record could not be written. Retrying the same confirmation returns its result without repeating it.',
        named('AuditSinkError'),
      ),
    ).toMatch(/carried out, .*look at the target first\.$/);
  });

  it('leaves every other error alone', () => {
    const other = new ProtocolError(-32603, 'Internal error');
    expect(legacyConfirmationFailure(new Error('boom'), other)).toBeUndefined();
    expect(gateError('Something else.', new Error('x'))).toBeUndefined();
    expect(
      legacyConfirmationFailure(
        named('x', new ReplayStoreUnavailableError('down')),
        new ProtocolError(-32602, 'Invalid params'),
      ),
    ).toBeUndefined();
  });
});
