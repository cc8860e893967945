import type { ReceiptSigningKey } from '@mrtr/receipt';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  importPKCS8,
  type JWK,
} from 'jose';

/** What {@link receiptKeysFromEnv} reads. */
export interface ReceiptKeyEnv {
  /**
   * The Ed25519 private key that signs receipts: a private JWK (JSON, with
   * `d`; its `kid` is used when present) or a PKCS #8 PEM (`-----BEGIN
   * PRIVATE KEY-----`; `\n` escapes are accepted for one-line env files).
   */
  MRTR_RECEIPT_KEY?: string | undefined;
  /** The signing key's `kid` (default: the JWK's `kid`, else its RFC 7638 thumbprint). */
  MRTR_RECEIPT_KID?: string | undefined;
  /**
   * More public keys to publish and verify with, as a JWKS (`{"keys":[…]}`,
   * each with a `kid`): the next key before it signs, or the previous one
   * until its last receipts expire (key rotation, see the README).
   */
  MRTR_RECEIPT_PUBLIC_KEYS?: string | undefined;
  /** `production`: an unset `MRTR_RECEIPT_KEY` is refused rather than replaced by a fresh key. */
  NODE_ENV?: string | undefined;
}

/** The receipt keys of a server, and whether the signing key was made for this process only. */
export interface ReceiptKeys {
  /** The ring for `ReceiptSigner.create`: the signing key first, then the published public keys. */
  keys: ReceiptSigningKey[];
  /** The signing key's `kid`. */
  kid: string;
  /** True when `MRTR_RECEIPT_KEY` was unset and a fresh key was generated: receipts die with the process. */
  generated: boolean;
}

/** How to make a key, in the error messages and the README. */
export const RECEIPT_KEY_HOWTO =
  "make one with: openssl genpkey -algorithm ed25519 (PKCS #8 PEM), or node -e \"console.log(JSON.stringify(require('node:crypto').generateKeyPairSync('ed25519').privateKey.export({format:'jwk'})))\"";

async function thumbprintKid(publicJwk: JWK): Promise<string> {
  const { kty, crv, x } = publicJwk;
  return calculateJwkThumbprint({ kty, crv, x } as JWK);
}

/** The signing key of `MRTR_RECEIPT_KEY`; the message never quotes the key. @throws {Error} */
async function signingKey(raw: string, kidFromEnv: string | undefined): Promise<ReceiptSigningKey> {
  const text = raw.trim();
  let privateJwk: JWK;
  let named: string | undefined;
  try {
    if (text.startsWith('{')) {
      const jwk = JSON.parse(text) as JWK;
      if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string')
        throw new Error('not an Ed25519 private JWK (kty OKP, crv Ed25519, with d)');
      await importJWK(jwk, 'EdDSA'); // checks that it is a usable key
      privateJwk = jwk;
      named = typeof jwk.kid === 'string' ? jwk.kid : undefined;
    } else if (text.includes('-----BEGIN PRIVATE KEY-----')) {
      const pem = text.replaceAll('\\n', '\n');
      privateJwk = await exportJWK(await importPKCS8(pem, 'EdDSA', { extractable: true }));
    } else throw new Error('neither a JSON private JWK nor a PKCS #8 PEM');
  } catch (error) {
    const why = error instanceof SyntaxError ? 'not valid JSON' : (error as Error).message;
    throw new Error(`MRTR_RECEIPT_KEY is not an Ed25519 private key: ${why}; ${RECEIPT_KEY_HOWTO}`);
  }
  const { d: _secret, kid: _kid, ...publicJwk } = privateJwk;
  const kid = kidFromEnv || named || (await thumbprintKid(publicJwk));
  return { kid, privateKey: { ...privateJwk, kid }, publicKey: { ...publicJwk, kid } };
}

/** The public keys of `MRTR_RECEIPT_PUBLIC_KEYS`. @throws {Error} */
function publicKeys(raw: string | undefined): ReceiptSigningKey[] {
  if (!raw?.trim()) return [];
  let set: { keys?: unknown };
  try {
    set = JSON.parse(raw) as { keys?: unknown };
  } catch {
    throw new Error('MRTR_RECEIPT_PUBLIC_KEYS must be a JWKS: {"keys":[{"kty":"OKP",…,"kid":…}]}');
  }
  if (!Array.isArray(set?.keys))
    throw new Error('MRTR_RECEIPT_PUBLIC_KEYS must be a JWKS: {"keys":[…]}');
  return set.keys.map((key: JWK, i) => {
    if (typeof key !== 'object' || key === null || typeof key.kid !== 'string')
      throw new Error(`MRTR_RECEIPT_PUBLIC_KEYS: keys[${i}] needs a kid`);
    if ('d' in key)
      throw new Error(
        `MRTR_RECEIPT_PUBLIC_KEYS: keys[${i}] holds a private key; publish public keys only`,
      );
    return { kid: key.kid, publicKey: key };
  });
}

/**
 * A fresh Ed25519 key for this process only, with a random `kid`: never a
 * fixed key, so a receipt from one run cannot be replayed against another
 * whose key someone read in the source.
 */
export async function freshReceiptKeys(): Promise<ReceiptKeys> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { extractable: true });
  const kid = `dev-${await thumbprintKid(await exportJWK(publicKey))}`.slice(0, 64);
  return { keys: [{ kid, privateKey, publicKey }], kid, generated: true };
}

/**
 * The receipt signing ring of the environment: `MRTR_RECEIPT_KEY` signs
 * (`MRTR_RECEIPT_KID` names it), `MRTR_RECEIPT_PUBLIC_KEYS` adds keys that
 * only verify. Unset `MRTR_RECEIPT_KEY`: a fresh key for this process
 * ({@link freshReceiptKeys}), except with `NODE_ENV=production`.
 * Key formats and rotation: the service deleter's README.
 * @throws {Error} for a key that is not an Ed25519 private key (the message
 *   never quotes it), a JWKS that is not one, or an unset key in production.
 *   The ring itself (kids, pairs) is checked by `ReceiptSigner.create`.
 */
export async function receiptKeysFromEnv(env: ReceiptKeyEnv): Promise<ReceiptKeys> {
  const extra = publicKeys(env.MRTR_RECEIPT_PUBLIC_KEYS);
  if (!env.MRTR_RECEIPT_KEY?.trim()) {
    if (env.NODE_ENV === 'production')
      throw new Error(`MRTR_RECEIPT_KEY must be set in production; ${RECEIPT_KEY_HOWTO}`);
    const fresh = await freshReceiptKeys();
    return { ...fresh, keys: [...fresh.keys, ...extra] };
  }
  const key = await signingKey(env.MRTR_RECEIPT_KEY, env.MRTR_RECEIPT_KID || undefined);
  return { keys: [key, ...extra], kid: key.kid, generated: false };
}
