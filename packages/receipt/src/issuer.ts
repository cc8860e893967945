import type { ReceiptLevel } from './claims.js';
import type { ReceiptSigner } from './signer.js';

/**
 * What a confirmation gate hands over when a confirmation lets an operation
 * run (`ReceiptRequest` of `@mrtr/gate`, restated here so this package does
 * not depend on the gate).
 */
export interface ConfirmedOperation {
  principal: string;
  /** `method:name`, e.g. `tools/call:delete_service`. */
  operation: string;
  /** `sha256:` digest of the RFC 8785 canonical arguments. */
  argumentsDigest: string;
  /** `sha256:` digest of the question as shown. */
  questionDigest: string;
  /**
   * How it was confirmed: `form`, `url`, or `presence` (a passkey, with its
   * credential id). A `url` approval the person made with a passkey may
   * carry its `credentialId` too; it is signed as `url`, without `cred`.
   */
  confirmation: { level: 'form' | 'url' | 'presence'; credentialId?: string };
  /** The ticket nonce claimed for the operation. */
  nonce: string;
  /** `sha256:` digest of the accepted response's `content` (`{}` for a page approval); signed as `cd`. */
  contentDigest?: string;
}

/**
 * The `receipts` option of `@mrtr/gate`'s `ConfirmationGate`: signs a receipt
 * with `signer` for each confirmed operation (`presence` is signed as level
 * `passkey`, with the credential id). A question asked at `url` is signed as
 * `url` even when the person approved it with a passkey: `lvl` names the
 * level the question was asked at, which a verifier needs to recompute `qd`
 * (its `mode`), and `cred` goes only with `passkey`.
 * @throws (from `issue`) what `signer.sign` throws: a `TypeError` for a
 *   `presence` confirmation without its `credentialId`.
 * @example
 * ```ts
 * import { ConfirmationGate } from '@mrtr/gate';
 * import { type ReceiptSigner, receiptIssuer } from '@mrtr/receipt';
 * import type { MemoryReplayStore } from '@mrtr/replay';
 * import type { TicketSealer } from '@mrtr/ticket';
 *
 * declare const sealer: TicketSealer, store: MemoryReplayStore, signer: ReceiptSigner; // yours
 * const gate = new ConfirmationGate({ sealer, store, receipts: receiptIssuer(signer) });
 * ```
 */
export function receiptIssuer(signer: ReceiptSigner): {
  issue(operation: ConfirmedOperation): Promise<string>;
} {
  return {
    async issue(o) {
      const lvl: ReceiptLevel =
        o.confirmation.level === 'presence' ? 'passkey' : o.confirmation.level;
      const { receipt } = await signer.sign({
        sub: o.principal,
        op: o.operation,
        ad: o.argumentsDigest,
        qd: o.questionDigest,
        lvl,
        ...(lvl === 'passkey' && o.confirmation.credentialId !== undefined
          ? { cred: o.confirmation.credentialId }
          : {}),
        ...(o.contentDigest !== undefined ? { cd: o.contentDigest } : {}),
        n: o.nonce,
      });
      return receipt;
    },
  };
}
