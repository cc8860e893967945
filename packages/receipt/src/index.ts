/**
 * @mrtr/receipt: signed approval receipts. When a person confirms a gated
 * MCP operation, the server signs a receipt (compact JWS, EdDSA over
 * Ed25519, through jose) binding the principal, the operation, the RFC 8785
 * digest of the arguments, the question, how it was confirmed and the
 * ticket nonce; an executor verifies it offline against the published JWKS,
 * refuses anything but the exact action approved, and uses it once.
 *
 * @example
 * ```ts
 * import { ReceiptSigner, verifyAndRun } from '@mrtr/receipt';
 * import { MemoryReplayStore } from '@mrtr/replay';
 * import { generateKeyPair } from 'jose';
 *
 * declare const receipt: string; // signed by signer.sign() when the person confirmed
 * declare const args: { serviceId: string; name: string };
 * declare function deleteService(id: string): Promise<void>;
 * const signer = await ReceiptSigner.create({
 *   keys: [{ kid: 'r1', ...(await generateKeyPair('EdDSA')) }],
 *   issuer: 'https://deleter.example',
 * });
 * // executor side, with the published JWKS:
 * await verifyAndRun(
 *   receipt,
 *   { operation: 'tools/call:delete_service', arguments: args, keys: signer.jwks(), store: new MemoryReplayStore() },
 *   async () => { await deleteService(args.serviceId); return { deleted: args.serviceId }; },
 * );
 * ```
 * @module @mrtr/receipt
 * @packageDocumentation
 */
export {
  MAX_RECEIPT_LENGTH,
  MAX_RECEIPT_TTL_SECONDS,
  RECEIPT_ALGORITHM,
  RECEIPT_LEVELS,
  RECEIPT_TYPE,
  type ReceiptClaims,
  type ReceiptInput,
  type ReceiptLevel,
} from './claims.js';
export { describeReceipt, type ReceiptDescription } from './describe.js';
export { ReceiptError, type ReceiptErrorCode } from './errors.js';
export { actionMismatch, type ExpectedAction, RECEIPT_NONCE_PREFIX } from './expected.js';
export { type ConfirmedOperation, receiptIssuer } from './issuer.js';
export { MAX_JWKS_BYTES, type ReceiptKeySource, remoteKeySet } from './key-source.js';
export type { Ed25519KeyInput, ReceiptSigningKey } from './keys.js';
export {
  DEFAULT_RECEIPT_TTL_SECONDS,
  ReceiptSigner,
  type ReceiptSignerOptions,
  type SignedReceipt,
} from './signer.js';
export { type VerifiedRun, verifyAndRun } from './verify-and-run.js';
export { type VerifyReceiptOptions, verifyReceipt } from './verify-receipt.js';
export {
  DEFAULT_CLOCK_TOLERANCE_SECONDS,
  MAX_CLOCK_TOLERANCE_SECONDS,
  type VerifiedReceipt,
  type VerifyReceiptSignatureOptions,
  verifyReceiptSignature,
} from './verify-signature.js';
