import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { randomBytes } from '@noble/ciphers/utils.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { isTicketClaims, type TicketClaims, type TicketClaimsInput } from './claims.js';

/** The compact form's version tag; bump it when the layout or the KDF changes. */
export const TICKET_VERSION = 'v1';
/**
 * HKDF-SHA256 `info` label for ticket subkeys (RFC 5869 §3.2). The key id is
 * appended, so each `kid` gets its own subkey, and no other purpose that
 * derives from the same master secret with a different label can collide.
 */
export const TICKET_HKDF_INFO = 'mrtr-gate/ticket/v1/xchacha20poly1305';
/** HKDF salt (RFC 5869 §3.1): fixed and public, it only separates this application. */
const HKDF_SALT = new TextEncoder().encode('mrtr-gate/ticket/salt/v1');

/** Minimum master secret length, bytes: a 256-bit key needs 256 bits of input. */
export const MIN_SECRET_BYTES = 32;
/** Default largest ticket string accepted by `open`, in characters (4 KiB). */
export const DEFAULT_MAX_TICKET_LENGTH = 4096;
/** Default clock skew tolerated on `iat` and `exp`, in seconds. */
export const DEFAULT_MAX_SKEW_SECONDS = 30;
/** Default ticket lifetime, in seconds. */
export const DEFAULT_TTL_SECONDS = 300;
const NONCE_BYTES = 24; // XChaCha20 nonce
const CLAIM_NONCE_BYTES = 16; // 128 bits for the single-use nonce `n`
const KID = /^[A-Za-z0-9_-]{1,32}$/;

/** One master key of the ring. */
export interface TicketKey {
  /** Key id, sent in the clear: 1 to 32 characters of `[A-Za-z0-9_-]`. */
  kid: string;
  /** Master secret: at least 32 bytes; a string is taken as its UTF-8 bytes. */
  secret: Uint8Array | string;
}

/** Options of {@link TicketSealer}. */
export interface TicketSealerOptions {
  /** The key ring; the first key seals new tickets, every key opens. */
  keys: readonly TicketKey[];
  /** Lifetime of new tickets, seconds (default 300). */
  ttlSeconds?: number;
  /** Clock skew tolerated when opening, seconds (default 30). */
  maxSkewSeconds?: number;
  /** Largest ticket string `open` will decode, characters (default 4096). */
  maxTicketLength?: number;
  /** Clock, milliseconds since the epoch (default `Date.now`); for tests. */
  now?: () => number;
}

/** Why a ticket was refused. Fixed and opaque on purpose: nothing of the payload leaks. */
export type TicketFailureReason =
  | 'malformed'
  | 'version'
  | 'kid'
  | 'mac'
  | 'expired'
  | 'not_yet_valid'
  | 'too_large';

/** What {@link TicketSealer.open} returns. */
export type TicketOpenResult<App = unknown> =
  | { ok: true; claims: TicketClaims<App>; kid: string }
  | { ok: false; reason: TicketFailureReason };

/** Thrown at construction for a key ring that must not be used. */
export class TicketConfigError extends Error {
  override readonly name = 'TicketConfigError';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const B64URL = /^[A-Za-z0-9_-]+$/;

function aad(kid: string): Uint8Array {
  return encoder.encode(`${TICKET_VERSION}.${kid}`);
}

/**
 * Seals and opens confirmation tickets: the `requestState` an MRTR server
 * hands the client and must get back unchanged.
 *
 * Format: `v1.<kid>.<base64url(nonce24 ‖ ciphertext ‖ tag16)>`, AEAD
 * XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha) with a fresh random 24-byte
 * nonce per ticket, the associated data `"v1.<kid>"`, and a per-kid subkey
 * HKDF-SHA256(secret, salt, `TICKET_HKDF_INFO + "/" + kid`) (RFC 5869). The
 * plaintext is the JSON of {@link TicketClaims}.
 *
 * @example
 * ```ts
 * const sealer = new TicketSealer({ keys: [{ kid: 'k1', secret: process.env.MRTR_SECRET! }] });
 * const { ticket } = sealer.seal({ sub: 'alice', op: 'tools/call:notes_delete', ad, key: 'confirm', ph: 'confirm' });
 * const opened = sealer.open(ticket); // { ok: true, claims } or { ok: false, reason }
 * ```
 */
export class TicketSealer {
  readonly #keys = new Map<string, Uint8Array>();
  readonly #sealKid: string;
  readonly #ttl: number;
  readonly #skew: number;
  readonly #maxLength: number;
  readonly #now: () => number;

  /** @throws {TicketConfigError} on an empty ring, a bad or repeated kid, a secret under 32 bytes, or a non-positive TTL. */
  constructor(options: TicketSealerOptions) {
    if (options.keys.length === 0) throw new TicketConfigError('the key ring is empty');
    for (const { kid, secret } of options.keys) {
      if (!KID.test(kid)) throw new TicketConfigError(`invalid key id ${JSON.stringify(kid)}`);
      if (this.#keys.has(kid)) throw new TicketConfigError(`key id ${kid} appears twice`);
      const ikm = typeof secret === 'string' ? encoder.encode(secret) : secret;
      if (ikm.length < MIN_SECRET_BYTES) {
        throw new TicketConfigError(
          `master secret for key ${kid} is ${ikm.length} bytes; at least ${MIN_SECRET_BYTES} are required`,
        );
      }
      const info = encoder.encode(`${TICKET_HKDF_INFO}/${kid}`);
      this.#keys.set(kid, hkdf(sha256, ikm, HKDF_SALT, info, 32));
    }
    this.#sealKid = (options.keys[0] as TicketKey).kid;
    this.#ttl = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
    this.#skew = options.maxSkewSeconds ?? DEFAULT_MAX_SKEW_SECONDS;
    this.#maxLength = options.maxTicketLength ?? DEFAULT_MAX_TICKET_LENGTH;
    this.#now = options.now ?? Date.now;
    if (!(this.#ttl > 0) || !Number.isInteger(this.#ttl))
      throw new TicketConfigError('ttlSeconds must be a positive integer');
    if (!(this.#skew >= 0)) throw new TicketConfigError('maxSkewSeconds must be ≥ 0');
  }

  /** The ticket lifetime in seconds. */
  get ttlSeconds(): number {
    return this.#ttl;
  }

  /**
   * Seal new claims under the newest key, adding a fresh 128-bit nonce `n`,
   * `iat` = now and `exp` = now + TTL (Unix seconds).
   * @returns the compact ticket string and the claims it carries.
   */
  seal<App>(input: TicketClaimsInput<App>): { ticket: string; claims: TicketClaims<App> } {
    const iat = Math.floor(this.#now() / 1000);
    const claims: TicketClaims<App> = {
      ...input,
      n: Buffer.from(randomBytes(CLAIM_NONCE_BYTES)).toString('base64url'),
      iat,
      exp: iat + this.#ttl,
    };
    const key = this.#keys.get(this.#sealKid) as Uint8Array;
    const nonce = randomBytes(NONCE_BYTES);
    const sealed = xchacha20poly1305(key, nonce, aad(this.#sealKid)).encrypt(
      encoder.encode(JSON.stringify(claims)),
    );
    const body = new Uint8Array(NONCE_BYTES + sealed.length);
    body.set(nonce, 0);
    body.set(sealed, NONCE_BYTES);
    const ticket = `${TICKET_VERSION}.${this.#sealKid}.${Buffer.from(body).toString('base64url')}`;
    return { ticket, claims };
  }

  /**
   * Open a ticket: size, format, version, key id, AEAD tag, claim shape, then
   * time (`iat` no later than now + skew, `exp` no earlier than now − skew).
   * Never throws on hostile input and never returns the payload of a ticket
   * that failed.
   * @param ticket the `requestState` string as received (any value is accepted).
   */
  open<App = unknown>(ticket: unknown): TicketOpenResult<App> {
    if (typeof ticket !== 'string') return { ok: false, reason: 'malformed' };
    if (ticket.length > this.#maxLength) return { ok: false, reason: 'too_large' };
    const parts = ticket.split('.');
    if (parts.length !== 3) return { ok: false, reason: 'malformed' };
    const [version, kid, body] = parts as [string, string, string];
    if (version !== TICKET_VERSION) return { ok: false, reason: 'version' };
    const key = this.#keys.get(kid);
    if (!key) return { ok: false, reason: 'kid' };
    if (!B64URL.test(body)) return { ok: false, reason: 'malformed' };
    const bytes = Buffer.from(body, 'base64url');
    // Node's decoder ignores stray trailing characters; accept only the one canonical spelling.
    if (bytes.toString('base64url') !== body) return { ok: false, reason: 'malformed' };
    if (bytes.length < NONCE_BYTES + 16) return { ok: false, reason: 'malformed' };
    let plain: Uint8Array;
    try {
      plain = xchacha20poly1305(key, bytes.subarray(0, NONCE_BYTES), aad(kid)).decrypt(
        bytes.subarray(NONCE_BYTES),
      );
    } catch {
      return { ok: false, reason: 'mac' };
    }
    let claims: unknown;
    try {
      claims = JSON.parse(decoder.decode(plain));
    } catch {
      return { ok: false, reason: 'malformed' };
    }
    if (!isTicketClaims(claims)) return { ok: false, reason: 'malformed' };
    const now = Math.floor(this.#now() / 1000);
    if (claims.iat > now + this.#skew) return { ok: false, reason: 'not_yet_valid' };
    if (claims.exp + this.#skew < now) return { ok: false, reason: 'expired' };
    return { ok: true, claims: claims as TicketClaims<App>, kid };
  }
}
