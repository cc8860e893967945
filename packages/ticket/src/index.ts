/**
 * @mrtr/ticket: sealed confirmation tickets for MCP `requestState`
 * (2026-07-28, `basic/patterns/mrtr`, "Server Requirements": integrity,
 * principal, TTL and request binding), with AEAD instead of a bare MAC so the
 * client learns nothing of what the server sealed.
 *
 * @example
 * ```ts
 * import { TicketSealer } from '@mrtr/ticket';
 * const sealer = new TicketSealer({ keys: [{ kid: '2026-11', secret: process.env.MRTR_SECRET! }] });
 * const { ticket } = sealer.seal({ sub: 'alice', op: 'tools/call:notes_delete', ad, key: 'delete_choice', ph: 'confirm' });
 * const opened = sealer.open(ticket);
 * if (!opened.ok) console.log(opened.reason); // 'mac', 'expired', …
 * ```
 * @packageDocumentation
 */
export type { TicketClaims, TicketClaimsInput } from './claims.js';
export {
  DEFAULT_MAX_SKEW_SECONDS,
  DEFAULT_MAX_TICKET_LENGTH,
  DEFAULT_TTL_SECONDS,
  MIN_SECRET_BYTES,
  TICKET_HKDF_INFO,
  TICKET_VERSION,
  TicketConfigError,
  type TicketFailureReason,
  type TicketKey,
  type TicketOpenResult,
  TicketSealer,
  type TicketSealerOptions,
} from './sealer.js';
