import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { aead, NONCE_BYTES, TAG_BYTES } from './aead.js';
import { canonicalBase64url, fresh, sameString } from './bytes.js';
import type { TicketBinding, TicketClaims, TicketClaimsInput } from './claims.js';
import {
  approvalIdBytes,
  associatedDataAfter,
  associatedDataHead,
  decodeClaims,
  digestBytes,
  encodeClaims,
  TICKET_NONCE_BYTES,
  wellFormed,
} from './format.js';
import {
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

/** Operations whose associated-data head a sealer keeps per key (see `#aadHeads`). */
const MAX_CACHED_HEADS = 256;
const MAX_CACHED_OP_LENGTH = 256;
const KID = /^[A-Za-z0-9_-]{1,32}$/;
const B64URL = /^[A-Za-z0-9_-]+$/;
const encoder = new TextEncoder();
const salt = encoder.encode(TICKET_HKDF_SALT);

/** A claim `seal` takes as a string: it must be one UTF-8 carries unchanged. */
function checkClaim(name: string, value: unknown): void {
  if (typeof value !== 'string' || !value.isWellFormed())
    throw new TypeError(`ticket claim ${name} must be a well-formed string`);
}

function fail(reason: TicketFailureReason): { ok: false; reason: TicketFailureReason } {
  return { ok: false, reason };
}

/**
 * Seals and opens confirmation tickets: the `requestState` an MRTR server
 * hands the client and must get back unchanged (MCP 2026-07-28
 * `basic/patterns/mrtr`: servers MUST protect its integrity and MUST reject
 * state that fails verification).
 *
 * Wire form: `v1.<kid>.<base64url(nonce ‖ ciphertext ‖ tag)>` without
 * padding. AEAD: XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha) with a fresh
 * random 24-byte nonce per ticket, under the subkey
 * `HKDF-SHA256(secret, TICKET_HKDF_SALT, TICKET_HKDF_INFO + "/" + kid, 32)`
 * (RFC 5869). Associated data: the version, the kid, `op` and `argsDigest`; the
 * plaintext is the binary layout of the other claims (`src/format.ts`).
 *
 * @example
 * ```ts
 * import { digestJson } from '@mrtr/digest';
 * import { TicketSealer } from '@mrtr/ticket';
 *
 * const argsDigest = digestJson({ id: 'note-1' }); // the digest of the call's arguments
 * const sealer = new TicketSealer({ keys: [{ kid: 'k1', secret: process.env.MRTR_SECRET ?? '' }] });
 * const { ticket } = sealer.seal({ sub: 'alice', op: 'tools/call:notes_delete', argsDigest, inputKey: 'confirm', phase: 'confirm' });
 * const opened = sealer.open(ticket, { sub: 'alice', op: 'tools/call:notes_delete', argsDigest });
 * if (opened.ok) opened.claims.nonce; else opened.reason; // 'mac', 'expired', …
 * ```
 */
export class TicketSealer {
  readonly #keys = new Map<string, Uint8Array>();
  readonly #sealKid: string;
  readonly #ttl: number;
  readonly #skew: number;
  readonly #maxLength: number;
  readonly #now: () => number;
  /**
   * The associated data's head by key id and operation: the same few
   * operations recur in every ticket, and writing the head was a fifth of
   * the layout's cost. At most {@link MAX_CACHED_HEADS} per key, of
   * operations up to {@link MAX_CACHED_OP_LENGTH} characters, each first
   * sealed or opened with a valid tag; others are written each time.
   */
  readonly #aadHeads = new Map<string, Map<string, Uint8Array>>();

  /**
   * @throws {TicketConfigError} on an empty ring, a bad or repeated kid, a
   *   secret under 32 bytes, a TTL that is not a positive integer, a skew
   *   that is not an integer from 0 to 300, a maximum length under 64, a key
   *   that is not `{ kid, secret }`, a secret that is neither a `Uint8Array` nor
   *   a well-formed string, or a `now` that is not a function.
   */
  constructor(options: TicketSealerOptions) {
    if (!Array.isArray(options?.keys) || options.keys.length === 0)
      throw new TicketConfigError(
        'keys must list at least one { kid, secret }: the first seals new tickets, the others only open them (rotation)',
      );
    for (const key of options.keys) {
      const { kid, secret } = (key ?? {}) as Partial<TicketKey>;
      if (typeof kid !== 'string' || !KID.test(kid))
        throw new TicketConfigError(
          `invalid key id ${JSON.stringify(kid)}: a kid is 1 to 32 characters of A-Z, a-z, 0-9, _ and -`,
        );
      if (this.#keys.has(kid))
        throw new TicketConfigError(
          `key id ${kid} appears twice in keys: each kid names one secret`,
        );
      if (typeof secret === 'string' ? !secret.isWellFormed() : !(secret instanceof Uint8Array))
        // UTF-8 would write a lone surrogate as U+FFFD: two such secrets would derive one key.
        throw new TicketConfigError(
          `master secret for key ${kid} must be a Uint8Array or a well-formed string (e.g. base64 of random bytes)`,
        );
      const ikm = typeof secret === 'string' ? encoder.encode(secret) : (secret as Uint8Array);
      if (ikm.length < MIN_SECRET_BYTES) {
        throw new TicketConfigError(
          `master secret for key ${kid} is ${ikm?.length ?? 0} bytes; at least ${MIN_SECRET_BYTES} random bytes are required (make one with \`openssl rand -base64 32\`)`,
        );
      }
      const info = encoder.encode(`${TICKET_HKDF_INFO}/${kid}`);
      this.#keys.set(kid, hkdf(sha256, ikm, salt, info, 32));
    }
    this.#sealKid = (options.keys[0] as TicketKey).kid;
    this.#ttl = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
    this.#skew = options.maxSkewSeconds ?? DEFAULT_MAX_SKEW_SECONDS;
    this.#maxLength = options.maxTicketLength ?? DEFAULT_MAX_TICKET_LENGTH;
    this.#now = options.now ?? Date.now;
    if (!Number.isSafeInteger(this.#ttl) || this.#ttl <= 0 || this.#ttl > MAX_TTL_SECONDS)
      throw new TicketConfigError(
        `ttlSeconds must be an integer from 1 to ${MAX_TTL_SECONDS} (one day)`,
      );
    if (!Number.isInteger(this.#skew) || this.#skew < 0 || this.#skew > MAX_SKEW_SECONDS)
      throw new TicketConfigError(
        `maxSkewSeconds must be an integer from 0 to ${MAX_SKEW_SECONDS}`,
      );
    if (!Number.isSafeInteger(this.#maxLength) || this.#maxLength < 64)
      throw new TicketConfigError('maxTicketLength must be an integer of at least 64');
    if (typeof this.#now !== 'function')
      throw new TicketConfigError('now must be a function returning milliseconds since the epoch');
  }

  /** The ticket lifetime, seconds. */
  get ttlSeconds(): number {
    return this.#ttl;
  }

  /** The key ids tickets open under, the sealing one first (the ring's order). */
  get kids(): readonly string[] {
    return [...this.#keys.keys()];
  }

  /** The key id new tickets are sealed under (the first of the ring). */
  get sealKid(): string {
    return this.#sealKid;
  }

  /**
   * The first instant at which a ticket with these claims no longer opens on
   * this sealer's clock, in milliseconds since the epoch: the end of the
   * second `exp` plus the tolerated skew (`open` compares whole seconds, so
   * a ticket opens through second `exp + skew` and is refused from the next).
   * A replay record of the ticket's nonce must live at least this long, or an
   * identical re-send after the record is forgotten would open and run again.
   */
  acceptedUntil(claims: Pick<TicketClaims, 'exp'>): number {
    return (claims.exp + this.#skew + 1) * 1000;
  }

  /**
   * Whether a ticket with these claims still opens now, on this sealer's
   * clock (before {@link acceptedUntil}). The gate asks again right before
   * it claims the nonce: work between opening and claiming (reading the
   * target, an approval, a slow database) must not carry a ticket past the
   * life of its replay record.
   */
  stillOpens(claims: Pick<TicketClaims, 'exp'>): boolean {
    return this.#now() < this.acceptedUntil(claims);
  }

  /** The clock skew tolerated on `iat` and `exp`, seconds. */
  get maxSkewSeconds(): number {
    return this.#skew;
  }

  /**
   * Seal new claims under the newest key, adding a fresh 128-bit `nonce`,
   * `iat` = now and `exp` = now + TTL (Unix seconds). Any `nonce`, `iat` or
   * `exp` in the input is ignored.
   *
   * @param input `sub`, `op`, `argsDigest`, `inputKey`, `phase` (strings);
   *   optional `questionDigest` (a `sha256:` digest of `@mrtr/digest`),
   *   `approvalId` (22 base64url characters), `candidates` (strings) and
   *   `data` (JSON data, sealed as `JSON.stringify(data)`).
   * @returns the ticket string and the claims it carries.
   * @throws {TypeError} for a claim of the wrong type or form, a string with
   *   a lone surrogate (UTF-8 would silently change it), or `data` JSON cannot hold.
   * @throws {RangeError} when the ticket would exceed `maxTicketLength`: it
   *   could never be opened.
   * @throws {TicketConfigError} when the clock (`now`) reads no time (NaN, before 1970).
   */
  seal<Data>(input: TicketClaimsInput<Data>): { ticket: string; claims: TicketClaims<Data> } {
    const { sub, op, argsDigest, inputKey, phase, questionDigest, approvalId, candidates, data } =
      input;
    checkClaim('sub', sub);
    checkClaim('op', op);
    checkClaim('argsDigest', argsDigest);
    checkClaim('inputKey', inputKey);
    checkClaim('phase', phase);
    const question = questionDigest === undefined ? undefined : digestBytes(questionDigest);
    if (questionDigest !== undefined && !question)
      throw new TypeError('ticket claim questionDigest must be a sha256: digest of @mrtr/digest');
    const approval = approvalId === undefined ? undefined : approvalIdBytes(approvalId);
    if (approvalId !== undefined && !approval)
      throw new TypeError('ticket claim approvalId must be 22 base64url characters (16 bytes)');
    if (
      candidates !== undefined &&
      !(
        Array.isArray(candidates) &&
        candidates.every((c) => typeof c === 'string' && c.isWellFormed())
      )
    )
      throw new TypeError('ticket claim candidates must be an array of well-formed strings');
    let dataJson: string | undefined;
    if (data !== undefined) {
      dataJson = JSON.stringify(data) as string | undefined;
      if (typeof dataJson !== 'string' || !dataJson.isWellFormed())
        throw new TypeError('ticket claim data must be JSON data');
    }

    const iat = Math.floor(this.#now() / 1000);
    // A broken clock (NaN) would seal a ticket that says nothing of when it was issued.
    if (!Number.isSafeInteger(iat) || iat < 0)
      throw new TicketConfigError(`the clock (now) read ${String(iat * 1000)}, not a time`);
    const random = fresh(NONCE_BYTES + TICKET_NONCE_BYTES);
    const aeadNonce = random.subarray(0, NONCE_BYTES);
    const nonce = random.subarray(NONCE_BYTES);
    const claims: TicketClaims<Data> = {
      sub,
      op,
      argsDigest,
      inputKey,
      phase,
      nonce: Buffer.from(nonce.buffer, nonce.byteOffset, nonce.byteLength).toString('base64url'),
      iat,
      exp: iat + this.#ttl,
    };
    if (questionDigest !== undefined) claims.questionDigest = questionDigest;
    if (approvalId !== undefined) claims.approvalId = approvalId;
    if (candidates !== undefined) claims.candidates = [...candidates];
    if (data !== undefined) claims.data = data;

    const plain = encodeClaims(nonce, claims, { question, approval, dataJson });
    // From Node's pool (every byte is written below): a `new Uint8Array` this size is a backing store of its own.
    const body = Buffer.allocUnsafe(NONCE_BYTES + plain.length + TAG_BYTES);
    body.set(aeadNonce, 0);
    const head =
      this.#kept(this.#sealKid, op) ??
      this.#keep(this.#sealKid, op, associatedDataHead(TICKET_VERSION, this.#sealKid, op));
    const aad = associatedDataAfter(head, argsDigest);
    const key32 = this.#keys.get(this.#sealKid) as Uint8Array;
    aead().seal(key32, aeadNonce, aad, plain, body.subarray(NONCE_BYTES));
    plain.fill(0); // a slice of Node's pool, handed out again uninitialized
    const ticket = `${TICKET_VERSION}.${this.#sealKid}.${body.toString('base64url')}`;
    if (ticket.length > this.#maxLength)
      throw new RangeError(
        `ticket of ${ticket.length} characters exceeds maxTicketLength ${this.#maxLength}; seal less in candidates and data`,
      );
    return { ticket, claims };
  }

  /** The associated-data head kept for `kid` (a key of this sealer) and `op`, if any. */
  #kept(kid: string, op: string): Uint8Array | undefined {
    return this.#aadHeads.get(kid)?.get(op);
  }

  /**
   * Keep `head` for `kid` and `op`, which have none kept yet: called when
   * sealing, and when opening only after the tag verified, so that tickets a
   * client made up cannot fill the room of the operations really used.
   * @returns `head`.
   */
  #keep(kid: string, op: string, head: Uint8Array): Uint8Array {
    let heads = this.#aadHeads.get(kid);
    if (heads === undefined) {
      heads = new Map();
      this.#aadHeads.set(kid, heads);
    }
    if (heads.size < MAX_CACHED_HEADS && op.length <= MAX_CACHED_OP_LENGTH) heads.set(op, head);
    return head;
  }

  /**
   * Open a ticket presented with a request. In order: size, shape, version,
   * key id, canonical base64url, AEAD tag under the request's `op` and `argsDigest`,
   * plaintext layout, principal, then time (`iat` no later than now + skew,
   * `exp` no earlier than now − skew). Never throws on any `ticket` value and
   * never returns anything decoded from a ticket that failed.
   *
   * @param ticket the `requestState` as received (any value).
   * @param binding what this request establishes: principal (`sub`),
   *   `method:name` (`op`) and argument digest (`argsDigest`).
   * @returns `{ ok: true, claims, kid }` or `{ ok: false, reason }`.
   * @throws {TypeError} only when `binding` itself is not three strings (a
   *   programming error, not hostile input).
   */
  open<Data = unknown>(ticket: unknown, binding: TicketBinding): TicketOpenResult<Data> {
    if (
      typeof binding?.sub !== 'string' ||
      typeof binding.op !== 'string' ||
      typeof binding.argsDigest !== 'string'
    )
      throw new TypeError('open needs a binding of sub, op and argsDigest strings');
    if (typeof ticket !== 'string') return fail('malformed');
    if (ticket.length > this.#maxLength) return fail('too_large');
    const dot1 = ticket.indexOf('.');
    const dot2 = dot1 < 0 ? -1 : ticket.indexOf('.', dot1 + 1);
    if (dot2 < 0 || ticket.indexOf('.', dot2 + 1) >= 0) return fail('malformed');
    if (ticket.slice(0, dot1) !== TICKET_VERSION) return fail('version');
    const kid = ticket.slice(dot1 + 1, dot2);
    const key = this.#keys.get(kid);
    if (!key) return fail('kid');
    const text = ticket.slice(dot2 + 1);
    if (!B64URL.test(text)) return fail('malformed');
    // Node's decoder tolerates a dangling character and non-zero padding bits; accept only the
    // one canonical spelling, so that no two strings open as the same ticket.
    if (!canonicalBase64url(text)) return fail('malformed');
    const bytes = Buffer.from(text, 'base64url');
    if (bytes.length < NONCE_BYTES + TAG_BYTES + 1) return fail('malformed');
    // No ticket is ever sealed with a binding UTF-8 cannot carry unchanged; such a binding matches none.
    if (!wellFormed(binding.op, binding.argsDigest)) return fail('mac');
    const kept = this.#kept(kid, binding.op);
    const head = kept ?? associatedDataHead(TICKET_VERSION, kid, binding.op);
    const aad = associatedDataAfter(head, binding.argsDigest);
    const plain = aead().open(
      key,
      bytes.subarray(0, NONCE_BYTES),
      aad,
      bytes.subarray(NONCE_BYTES),
    );
    if (!plain) return fail('mac');
    if (kept === undefined) this.#keep(kid, binding.op, head);
    const claims = decodeClaims(plain, binding.op, binding.argsDigest);
    if (!claims) return fail('malformed');
    if (!sameString(claims.sub, binding.sub)) return fail('principal');
    const now = Math.floor(this.#now() / 1000);
    // Written so that a clock reading NaN fails both: no ticket is valid at no time.
    if (!(claims.iat <= now + this.#skew)) return fail('not_yet_valid');
    if (!(claims.exp + this.#skew >= now)) return fail('expired');
    return { ok: true, claims: claims as TicketClaims<Data>, kid };
  }
}
