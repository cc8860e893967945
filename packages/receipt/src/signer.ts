import { randomBytes } from 'node:crypto';
import { type JSONWebKeySet, SignJWT } from 'jose';
import {
  assertReceiptInput,
  MAX_RECEIPT_LENGTH,
  MAX_RECEIPT_TTL_SECONDS,
  RECEIPT_ALGORITHM,
  RECEIPT_TYPE,
  type ReceiptClaims,
  type ReceiptInput,
} from './claims.js';
import { type ImportedKey, importRing, type ReceiptSigningKey } from './keys.js';

/** Default receipt lifetime, seconds: long enough to reach the executor, short enough to be of little use if leaked. */
export const DEFAULT_RECEIPT_TTL_SECONDS = 300;

/** Options of {@link ReceiptSigner.create}. */
export interface ReceiptSignerOptions {
  /**
   * The key ring, active key first: `keys[0]` signs every new receipt, every
   * key is published by {@link ReceiptSigner.jwks} and so verifies.
   */
  keys: readonly ReceiptSigningKey[];
  /** The `iss` claim: who signs (e.g. the server's origin), 1 to 256 characters. */
  issuer: string;
  /** Lifetime of new receipts, seconds: an integer from 1 to 86400 (default 300). */
  ttlSeconds?: number;
  /** Clock, milliseconds since the epoch (default `Date.now`); for tests. */
  now?: () => number;
}

/** What {@link ReceiptSigner.sign} returns. */
export interface SignedReceipt {
  /** The compact JWS (RFC 7515 §7.1): header `{alg: "EdDSA", kid, typ: "mrtr-receipt+jwt"}`. */
  receipt: string;
  /** The claims it carries, as signed. */
  claims: ReceiptClaims;
}

/**
 * Signs approval receipts: compact JWS, EdDSA over Ed25519 (RFC 8037),
 * through jose. Create it with {@link ReceiptSigner.create}.
 *
 * Key rotation (as for tickets): add the new key second and publish the
 * JWKS; once every verifier has it, move it first (it signs from then on);
 * after `ttlSeconds` plus the verifiers' clock tolerance, drop the old key,
 * or keep only its `publicKey` meanwhile if its private key must go at once.
 *
 * @example
 * ```ts
 * import { ReceiptSigner } from '@mrtr/receipt';
 * import { generateKeyPair } from 'jose';
 *
 * declare const sub: string, op: string, ad: string, qd: string, n: string; // from the confirmation
 * const { privateKey, publicKey } = await generateKeyPair('EdDSA');
 * const signer = await ReceiptSigner.create({
 *   keys: [{ kid: '2026-11', privateKey, publicKey }],
 *   issuer: 'https://deleter.example',
 * });
 * const { receipt } = await signer.sign({ sub, op, ad, qd, lvl: 'form', n });
 * signer.jwks(); // publish, e.g. at /.well-known/jwks.json
 * ```
 */
export class ReceiptSigner {
  readonly #ring: ImportedKey[];
  readonly #issuer: string;
  readonly #ttl: number;
  readonly #now: () => number;

  private constructor(ring: ImportedKey[], options: ReceiptSignerOptions) {
    this.#ring = ring;
    this.#issuer = options.issuer;
    this.#ttl = options.ttlSeconds ?? DEFAULT_RECEIPT_TTL_SECONDS;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Import the ring and check it.
   * @throws {TypeError} for an issuer that is not 1 to 256 characters, a
   *   `ttlSeconds` that is not an integer from 1 to 86400, an empty ring, a bad
   *   or repeated kid, a first key without a private key, a key that is not
   *   Ed25519, or a private and public key that are not one pair.
   */
  static async create(options: ReceiptSignerOptions): Promise<ReceiptSigner> {
    if (typeof options !== 'object' || options === null)
      throw new TypeError('options must be an object');
    const { issuer, ttlSeconds } = options;
    if (typeof issuer !== 'string' || issuer.length === 0 || issuer.length > 256)
      throw new TypeError('issuer must be a string of 1 to 256 characters');
    if (!issuer.isWellFormed()) throw new TypeError('issuer must not hold a lone surrogate');
    if (
      ttlSeconds !== undefined &&
      (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_RECEIPT_TTL_SECONDS)
    )
      throw new TypeError(`ttlSeconds must be an integer from 1 to ${MAX_RECEIPT_TTL_SECONDS}`);
    return new ReceiptSigner(await importRing(options.keys), options);
  }

  /** The `kid` that signs new receipts (the ring's first). */
  get kid(): string {
    return (this.#ring[0] as ImportedKey).kid;
  }

  /** The `iss` of every receipt this signer makes. */
  get issuer(): string {
    return this.#issuer;
  }

  /**
   * Sign a receipt for one confirmation. The signer adds `iss`, `iat` (now,
   * whole seconds), `exp` (`iat + ttlSeconds`) and a fresh `jti`.
   * @param input the claims to attest ({@link ReceiptInput}).
   * @returns the compact JWS and its claims.
   * @throws {TypeError} naming the first bad claim, or when the receipt would
   *   be longer than `MAX_RECEIPT_LENGTH` (8,192 characters), which every
   *   verifier refuses as `malformed`; nothing is returned.
   */
  async sign(input: ReceiptInput): Promise<SignedReceipt> {
    assertReceiptInput(input);
    const iat = Math.floor(this.#now() / 1000);
    if (!Number.isSafeInteger(iat) || iat < 0) throw new TypeError('the clock reads no valid time');
    const claims: ReceiptClaims = {
      iss: this.#issuer,
      sub: input.sub,
      iat,
      exp: iat + this.#ttl,
      jti: randomBytes(16).toString('base64url'),
      op: input.op,
      ad: input.ad,
      qd: input.qd,
      lvl: input.lvl,
      ...(input.cred !== undefined ? { cred: input.cred } : {}),
      ...(input.cd !== undefined ? { cd: input.cd } : {}),
      n: input.n,
    };
    const active = this.#ring[0] as ImportedKey;
    const receipt = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: RECEIPT_ALGORITHM, kid: active.kid, typ: RECEIPT_TYPE })
      .sign(active.privateKey as NonNullable<ImportedKey['privateKey']>);
    // Each claim is bounded, but escapes (a control character is six in JSON) can add up past it.
    if (receipt.length > MAX_RECEIPT_LENGTH)
      throw new TypeError(
        `the receipt would be ${receipt.length} characters, over MAX_RECEIPT_LENGTH (${MAX_RECEIPT_LENGTH}), which every verifier refuses: shorten sub, op or n`,
      );
    return { receipt, claims };
  }

  /**
   * The public keys of the whole ring as a JWKS (RFC 7517 §5), to publish for
   * executors and outside verifiers: each `{kty: "OKP", crv: "Ed25519", x,
   * kid, alg: "EdDSA", use: "sig"}`, active key first. A fresh copy each call.
   */
  jwks(): JSONWebKeySet {
    return { keys: this.#ring.map((key) => ({ ...key.publicJwk })) };
  }
}
