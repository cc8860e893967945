/**
 * The v1 byte layouts: the plaintext of a ticket and the associated data it
 * is sealed under. Binary rather than JSON because every byte travels twice
 * in every retry: the claims of a delete_service ticket take 57 bytes here
 * (plus `op` and `argsDigest` as associated data, which cost nothing on the wire)
 * against 211 as JSON.
 *
 * Plaintext (all integers unsigned LEB128, minimal, below 2^53; `str` is a
 * byte length followed by that many bytes of UTF-8):
 *
 *     flags           1 byte: bit 0 candidates, bit 1 data, bit 2
 *                     questionDigest, bit 3 approvalId present; others zero
 *     nonce           16 bytes
 *     iat             uint, Unix seconds
 *     ttl             uint, exp − iat in seconds
 *     sub             str
 *     inputKey        str
 *     phase           str
 *     questionDigest  (if flagged) 32 bytes: the SHA-256 of a `sha256:` digest
 *     approvalId      (if flagged) 16 bytes
 *     candidates      (if flagged) uint count, then count × str
 *     data            (if flagged) str holding JSON text
 *
 * Associated data: `str("v1.<kid>") ‖ str(op) ‖ str(argsDigest)`. The length
 * prefixes make the concatenation unambiguous.
 */
import type { TicketClaims } from './claims.js';

/** Length of the ticket's `nonce` (its single-use identity, not the AEAD nonce), bytes (128 bits). */
export const TICKET_NONCE_BYTES = 16;
/** Length of an approval id, bytes (128 bits). */
export const APPROVAL_ID_BYTES = 16;
const DIGEST_BYTES = 32;
const DIGEST_PREFIX = 'sha256:';
const FLAG_CANDIDATES = 1;
const FLAG_DATA = 2;
const FLAG_QUESTION = 4;
const FLAG_APPROVAL = 8;
const FLAGS = FLAG_CANDIDATES | FLAG_DATA | FLAG_QUESTION | FLAG_APPROVAL;
const MAX_UINT_BYTES = 8; // 8 × 7 bits covers every safe integer

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * `size` bytes whose content the writer overwrites before it hands any out:
 * a slice of Node's buffer pool for small sizes. A `new Uint8Array` over 64
 * bytes gets a backing store of its own outside the heap, which cost more
 * than writing the claims. Whoever is done with a plaintext zeroes it: the
 * pool is handed out again, uninitialized.
 */
function bytesOf(size: number): Uint8Array {
  return Buffer.allocUnsafe(size);
}

/** Base64url of `bytes`, read in place. */
function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/** Thrown inside the decoder for any byte sequence a genuine v1 ticket cannot hold. */
class Malformed extends Error {}

class Writer {
  #buf: Uint8Array;
  #pos = 0;

  constructor(size: number) {
    this.#buf = bytesOf(size);
  }

  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    const next = bytesOf(Math.max(this.#buf.length * 2, this.#pos + n));
    next.set(this.#buf.subarray(0, this.#pos));
    this.#buf.fill(0, 0, this.#pos); // a pool slice outlives the writer: leave no claims in it
    this.#buf = next;
  }

  byte(b: number): void {
    this.#room(1);
    this.#buf[this.#pos++] = b;
  }

  bytes(b: Uint8Array): void {
    this.#room(b.length);
    this.#buf.set(b, this.#pos);
    this.#pos += b.length;
  }

  uint(n: number): void {
    this.#room(MAX_UINT_BYTES);
    let v = n;
    while (v >= 0x80) {
      this.#buf[this.#pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.#pos++] = v;
  }

  str(s: string): void {
    // ASCII, the usual case, needs no encoder call.
    let ascii = true;
    for (let i = 0; i < s.length; i++) {
      if (s.charCodeAt(i) > 0x7f) {
        ascii = false;
        break;
      }
    }
    if (!ascii) {
      const b = encoder.encode(s);
      this.uint(b.length);
      this.bytes(b);
      return;
    }
    this.uint(s.length);
    this.#room(s.length);
    for (let i = 0; i < s.length; i++) this.#buf[this.#pos++] = s.charCodeAt(i);
  }

  done(): Uint8Array {
    return this.#buf.subarray(0, this.#pos);
  }
}

class Reader {
  #pos = 0;
  constructor(readonly buf: Uint8Array) {}

  byte(): number {
    if (this.#pos >= this.buf.length) throw new Malformed();
    return this.buf[this.#pos++] as number;
  }

  bytes(n: number): Uint8Array {
    if (this.#pos + n > this.buf.length) throw new Malformed();
    const out = this.buf.subarray(this.#pos, this.#pos + n);
    this.#pos += n;
    return out;
  }

  uint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < MAX_UINT_BYTES; i++) {
      const b = this.byte();
      value += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        // Minimal form only: a final zero group after the first byte is padding.
        if (b === 0 && i > 0) throw new Malformed();
        if (!Number.isSafeInteger(value)) throw new Malformed();
        return value;
      }
      scale *= 0x80;
    }
    throw new Malformed();
  }

  str(): string {
    const b = this.bytes(this.uint());
    let ascii = true;
    for (let i = 0; i < b.length; i++) {
      if ((b[i] as number) > 0x7f) {
        ascii = false;
        break;
      }
    }
    if (!ascii || b.length > 256) {
      try {
        return decoder.decode(b);
      } catch {
        throw new Malformed();
      }
    }
    return String.fromCharCode.apply(null, b as unknown as number[]);
  }

  end(): void {
    if (this.#pos !== this.buf.length) throw new Malformed();
  }
}

/** Whether every string is well-formed UTF-16 (encodable to UTF-8 and back unchanged). */
export function wellFormed(...values: string[]): boolean {
  for (const v of values) if (!v.isWellFormed()) return false;
  return true;
}

/** The 32 bytes of a `sha256:<43 base64url>` digest, or `undefined` when it is not one. */
export function digestBytes(digest: string): Uint8Array | undefined {
  if (typeof digest !== 'string' || digest.length !== DIGEST_PREFIX.length + 43) return undefined;
  if (!digest.startsWith(DIGEST_PREFIX)) return undefined;
  const text = digest.slice(DIGEST_PREFIX.length);
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.length !== DIGEST_BYTES || bytes.toString('base64url') !== text) return undefined;
  return bytes;
}

/** The 16 bytes of a 22-character base64url approval id, or `undefined` when it is not one. */
export function approvalIdBytes(id: string): Uint8Array | undefined {
  if (typeof id !== 'string' || id.length !== 22) return undefined;
  const bytes = Buffer.from(id, 'base64url');
  if (bytes.length !== APPROVAL_ID_BYTES || bytes.toString('base64url') !== id) return undefined;
  return bytes;
}

/**
 * `str("<version>.<kid>") ‖ str(op)`, the part of the associated data that
 * is the same for every ticket of one key and operation, in bytes of its
 * own (not a slice of Node's pool), so a sealer can keep it.
 */
export function associatedDataHead(version: string, kid: string, op: string): Uint8Array {
  const w = new Writer(version.length + kid.length + op.length + 16);
  w.str(`${version}.${kid}`);
  w.str(op);
  return Uint8Array.from(w.done());
}

/**
 * The associated data a ticket is sealed with: `head` ({@link associatedDataHead}
 * of its kid and operation) followed by `str(argsDigest)`.
 */
export function associatedDataAfter(head: Uint8Array, argsDigest: string): Uint8Array {
  const w = new Writer(head.length + argsDigest.length + MAX_UINT_BYTES);
  w.bytes(head);
  w.str(argsDigest);
  return w.done();
}

/** What {@link encodeClaims} seals besides the claims themselves: binary forms checked by the sealer. */
export interface SealedExtras {
  question?: Uint8Array | undefined;
  approval?: Uint8Array | undefined;
  dataJson?: string | undefined;
}

/** Encode the sealed part of the claims: everything but `op` and `argsDigest`, which travel as associated data. */
export function encodeClaims(
  nonce: Uint8Array,
  claims: Omit<TicketClaims, 'nonce' | 'op' | 'argsDigest'>,
  extras: SealedExtras,
): Uint8Array {
  const w = new Writer(128 + (extras.dataJson?.length ?? 0));
  w.byte(
    (claims.candidates ? FLAG_CANDIDATES : 0) |
      (extras.dataJson !== undefined ? FLAG_DATA : 0) |
      (extras.question ? FLAG_QUESTION : 0) |
      (extras.approval ? FLAG_APPROVAL : 0),
  );
  w.bytes(nonce);
  w.uint(claims.iat);
  w.uint(claims.exp - claims.iat);
  w.str(claims.sub);
  w.str(claims.inputKey);
  w.str(claims.phase);
  if (extras.question) w.bytes(extras.question);
  if (extras.approval) w.bytes(extras.approval);
  if (claims.candidates) {
    w.uint(claims.candidates.length);
    for (const c of claims.candidates) w.str(c);
  }
  if (extras.dataJson !== undefined) w.str(extras.dataJson);
  return w.done();
}

/**
 * Decode an authenticated plaintext; `op` and `argsDigest` come from the
 * binding it was opened with. Returns `null` for any layout a v1 sealer never writes.
 */
export function decodeClaims(
  plain: Uint8Array,
  op: string,
  argsDigest: string,
): TicketClaims<unknown> | null {
  try {
    const r = new Reader(plain);
    const flags = r.byte();
    if ((flags & ~FLAGS) !== 0) return null;
    const nonce = base64url(r.bytes(TICKET_NONCE_BYTES));
    const iat = r.uint();
    const exp = iat + r.uint();
    if (!Number.isSafeInteger(exp)) return null;
    const sub = r.str();
    const inputKey = r.str();
    const phase = r.str();
    const claims: TicketClaims<unknown> = { sub, op, argsDigest, inputKey, phase, nonce, iat, exp };
    if (flags & FLAG_QUESTION)
      claims.questionDigest = DIGEST_PREFIX + base64url(r.bytes(DIGEST_BYTES));
    if (flags & FLAG_APPROVAL) claims.approvalId = base64url(r.bytes(APPROVAL_ID_BYTES));
    if (flags & FLAG_CANDIDATES) {
      const count = r.uint();
      const candidates: string[] = [];
      for (let i = 0; i < count; i++) candidates.push(r.str());
      claims.candidates = candidates;
    }
    if (flags & FLAG_DATA) claims.data = JSON.parse(r.str());
    r.end();
    return claims;
  } catch {
    // Malformed, or the data field's JSON failed to parse: either way not a v1 plaintext.
    return null;
  }
}
