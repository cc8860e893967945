/**
 * @mrtr/ticket: sealed confirmation tickets for MCP `requestState`
 * (2026-07-28, `basic/patterns/mrtr`, "Server Requirements": integrity,
 * principal, TTL and request binding), with AEAD instead of a bare MAC so the
 * client learns nothing of what the server sealed. A ticket proves this
 * server minted it for this principal, operation and arguments, recently; it
 * does not make itself single-use: that is the replay store's job.
 *
 * @example
 * ```ts
 * import { digestJson } from '@mrtr/digest';
 * import { TicketSealer } from '@mrtr/ticket';
 *
 * const sealer = new TicketSealer({ keys: [{ kid: '2026-11', secret: process.env.MRTR_SECRET! }] });
 * const binding = {
 *   sub: 'user_5f2a',
 *   op: 'tools/call:delete_service',
 *   argsDigest: digestJson({ serviceId: 'svc_8f21c', name: 'api-prod' }),
 * };
 * // Round 1: mint, and send `ticket` as requestState.
 * const { ticket } = sealer.seal({ ...binding, inputKey: 'confirm_delete', phase: 'confirm' });
 * // Round 2: open with what the retry establishes.
 * const opened = sealer.open(ticket, binding);
 * if (opened.ok) console.log(opened.claims.nonce); // the nonce to claim in the replay store
 * else console.log(opened.reason); // 'mac', 'principal', 'expired', …
 * ```
 * @module @mrtr/ticket
 * @packageDocumentation
 */
export { aeadReady } from './aead.js';
export type { TicketBinding, TicketClaims, TicketClaimsInput } from './claims.js';
export {
  DEFAULT_MAX_SKEW_SECONDS,
  DEFAULT_MAX_TICKET_LENGTH,
  DEFAULT_TTL_SECONDS,
  MAX_SKEW_SECONDS,
  MAX_TTL_SECONDS,
  MIN_SECRET_BYTES,
  TICKET_HKDF_INFO,
  TICKET_HKDF_SALT,
  TICKET_VERSION,
  TicketConfigError,
  type TicketFailureReason,
  type TicketKey,
  type TicketOpenResult,
  type TicketSealerOptions,
} from './options.js';
export { TicketSealer } from './sealer.js';
