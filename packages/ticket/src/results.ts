import type { TicketClaims } from './claims.js';

/**
 * Why a ticket was refused. A closed set; none carries anything decoded from
 * the ticket.
 *
 * - `too_large`: longer than `maxTicketLength`; refused before any decoding.
 * - `malformed`: not a string of the form `v1.<kid>.<base64url>`, a body too
 *   short or not canonical base64url, or (only with a compromised or buggy
 *   sealer) an authentic plaintext that is not a v1 layout.
 * - `version`: another format version.
 * - `kid`: a key id not in the ring (never minted here, or its key was removed).
 * - `mac`: the AEAD tag does not verify for this ring, version, kid, `op` and
 *   `argsDigest`: the ticket was altered, forged, or minted for another operation or
 *   other arguments. These cannot be told apart, by design.
 * - `principal`: authentic, but minted for another principal.
 * - `not_yet_valid`: `iat` is more than the skew in the future.
 * - `expired`: `exp` is more than the skew in the past.
 */
export type TicketFailureReason =
  | 'malformed'
  | 'version'
  | 'kid'
  | 'mac'
  | 'principal'
  | 'expired'
  | 'not_yet_valid'
  | 'too_large';

/** What `TicketSealer.open` returns. */
export type TicketOpenResult<Data = unknown> =
  | { ok: true; claims: TicketClaims<Data>; kid: string }
  | { ok: false; reason: TicketFailureReason };

/** Thrown at construction for a key ring or option that must not be used. */
export class TicketConfigError extends Error {
  override readonly name = 'TicketConfigError';
}
