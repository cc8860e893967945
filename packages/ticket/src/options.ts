/**
 * The settings of a {@link TicketSealer} and what it answers: the format's
 * constants, the key ring, the options, the failure reasons of `open` and
 * the error thrown for a configuration that must not be used.
 */
import type { TicketClaims } from './claims.js';

/** The compact form's version tag; bump it when the layout, the AEAD or the KDF changes. */
export const TICKET_VERSION = 'v1';
/**
 * HKDF-SHA256 `info` label for ticket subkeys (RFC 5869 §3.2). `/<kid>` is
 * appended, so each key id gets its own subkey, and no other purpose that
 * derives from the same master secret with a different label can collide.
 */
export const TICKET_HKDF_INFO = 'mrtr-gate/ticket/v1/xchacha20poly1305';
/** HKDF salt (RFC 5869 §3.1): fixed and public; it only separates this application. */
export const TICKET_HKDF_SALT = 'mrtr-gate/ticket/salt/v1';

/**
 * Minimum master secret length, bytes (a string counts as its UTF-8 bytes).
 * A length is all the sealer can check: a 256-bit key needs 256 bits of
 * entropy, which only random bytes give (`openssl rand -base64 32` is 32
 * random bytes in 44 characters; 32 hex digits, or a word repeated, pass
 * this check with less).
 */
export const MIN_SECRET_BYTES = 32;
/** Default largest ticket string accepted by `open` (and minted by `seal`), characters: 4 KiB. */
export const DEFAULT_MAX_TICKET_LENGTH = 4096;
/** Default clock skew tolerated on `iat` and `exp`, seconds. */
export const DEFAULT_MAX_SKEW_SECONDS = 30;
/** Largest clock skew a sealer accepts, seconds: beyond this, fix the clocks. */
export const MAX_SKEW_SECONDS = 300;
/**
 * Longest ticket lifetime a sealer accepts, seconds (one day): a question is
 * answered within it, and a replay record lives until the ticket's expiry,
 * which a far one (`1e13` s) would put past what a `Date` or a store holds.
 */
export const MAX_TTL_SECONDS = 86_400;
/** Default ticket lifetime, seconds. */
export const DEFAULT_TTL_SECONDS = 300;

/** One master key of the ring. */
export interface TicketKey {
  /** Key id, sent in the clear: 1 to 32 characters of `[A-Za-z0-9_-]`. */
  kid: string;
  /** Master secret: at least 32 bytes, and random (see {@link MIN_SECRET_BYTES}); a string is taken as its UTF-8 bytes. */
  secret: Uint8Array | string;
}

/** Options of {@link TicketSealer}. */
export interface TicketSealerOptions {
  /** The key ring; the first key seals new tickets, every key opens. */
  keys: readonly TicketKey[];
  /** Lifetime of new tickets, seconds (default 300, at most {@link MAX_TTL_SECONDS}: one day). */
  ttlSeconds?: number;
  /** Clock skew tolerated when opening, seconds (default 30, at most 300). */
  maxSkewSeconds?: number;
  /** Largest ticket string `open` will decode and `seal` will mint, characters (default 4096). */
  maxTicketLength?: number;
  /** Clock, milliseconds since the epoch (default `Date.now`); for tests. */
  now?: () => number;
}

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

/** What {@link TicketSealer.open} returns. */
export type TicketOpenResult<Data = unknown> =
  | { ok: true; claims: TicketClaims<Data>; kid: string }
  | { ok: false; reason: TicketFailureReason };

/**
 * Thrown by the `TicketSealer` constructor for a key ring or option that
 * must not be used: no keys; a `kid` that is not 1 to 32 characters of
 * `A-Z a-z 0-9 _ -`, or appears twice; a secret under 32 bytes; `ttlSeconds`
 * not an integer from 1 to `MAX_TTL_SECONDS` (86,400); `maxSkewSeconds` not
 * an integer from 0 to 300; `maxTicketLength` under 64 characters. Its
 * `message` says which and how to fix it; nothing is kept.
 */
export class TicketConfigError extends Error {
  override readonly name = 'TicketConfigError';
}
