import {
  CompactSign,
  type CryptoKey,
  compactVerify,
  exportJWK,
  importJWK,
  importPKCS8,
  importSPKI,
  type JWK,
} from 'jose';
import { RECEIPT_ALGORITHM } from './claims.js';

/**
 * An Ed25519 key in one of the forms jose imports: a `CryptoKey` (e.g. from
 * `generateKeyPair('EdDSA')`), a JWK (`kty: "OKP"`, `crv: "Ed25519"`), or a
 * PEM string (PKCS #8 for a private key, SPKI for a public key).
 */
export type Ed25519KeyInput = CryptoKey | JWK | string;

/**
 * One key of a signer's ring.
 *
 * `privateKey` absent: a retired key kept only so its receipts still verify
 * until they expire (its public key stays in {@link ReceiptSigner.jwks}).
 * `publicKey` absent: derived from `privateKey`, which must then be a JWK
 * (with `x`), a PEM, or an extractable `CryptoKey`.
 */
export interface ReceiptSigningKey {
  /** Key id, the JWS `kid` header: 1 to 64 characters of `[A-Za-z0-9_.-]`. */
  kid: string;
  /** The Ed25519 private key. */
  privateKey?: Ed25519KeyInput;
  /** The Ed25519 public key. */
  publicKey?: Ed25519KeyInput;
}

/** A key of the ring once imported: its published JWK, and the private key when it can sign. */
export interface ImportedKey {
  kid: string;
  publicJwk: JWK;
  privateKey?: CryptoKey;
}

const KID = /^[A-Za-z0-9_.-]{1,64}$/;

function isCryptoKey(key: unknown): key is CryptoKey {
  return typeof CryptoKey !== 'undefined' && key instanceof CryptoKey;
}

async function importKey(
  key: Ed25519KeyInput,
  type: 'private' | 'public',
  label: string,
): Promise<CryptoKey> {
  let imported: CryptoKey | Uint8Array;
  try {
    if (isCryptoKey(key)) imported = key;
    else if (typeof key === 'string')
      imported =
        type === 'private'
          ? await importPKCS8(key, RECEIPT_ALGORITHM, { extractable: true })
          : await importSPKI(key, RECEIPT_ALGORITHM, { extractable: true });
    else if (typeof key === 'object' && key !== null) {
      if (type === 'public' && 'd' in key) throw new TypeError('a public JWK must not hold "d"');
      imported = await importJWK(key, RECEIPT_ALGORITHM, { extractable: true });
    } else throw new TypeError('not a CryptoKey, JWK or PEM string');
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new TypeError(`${label} is not an Ed25519 ${type} key: ${why}`);
  }
  if (
    !isCryptoKey(imported) ||
    imported.type !== type ||
    (imported.algorithm as { name?: string }).name !== 'Ed25519'
  )
    throw new TypeError(`${label} is not an Ed25519 ${type} key`);
  return imported;
}

/** The public JWK to publish: only the members a verifier needs. */
async function publicJwkOf(key: CryptoKey, kid: string, label: string): Promise<JWK> {
  if (!key.extractable)
    throw new TypeError(`${label}: give publicKey too (the private key is not extractable)`);
  const { kty, crv, x } = await exportJWK(key);
  return { kty, crv, x, kid, alg: RECEIPT_ALGORITHM, use: 'sig' };
}

/** A private key that does not belong to its public key would sign receipts nobody can verify. */
async function assertPair(privateKey: CryptoKey, publicJwk: JWK, label: string): Promise<void> {
  const probe = new TextEncoder().encode('mrtr-receipt key check');
  const jws = await new CompactSign(probe)
    .setProtectedHeader({ alg: RECEIPT_ALGORITHM })
    .sign(privateKey);
  const publicKey = await importJWK(publicJwk, RECEIPT_ALGORITHM);
  await compactVerify(jws, publicKey).catch(() => {
    throw new TypeError(`${label}: privateKey and publicKey are not one key pair`);
  });
}

/**
 * Import and check a signer's ring.
 * @throws {TypeError} for an empty ring, a bad or repeated kid, a first key
 *   without a private key, a key that is not Ed25519, a public key that cannot
 *   be had, or a private and public key that are not one pair.
 */
export async function importRing(keys: readonly ReceiptSigningKey[]): Promise<ImportedKey[]> {
  if (!Array.isArray(keys) || keys.length === 0)
    throw new TypeError('keys must list at least one key; the first one signs');
  const seen = new Set<string>();
  const ring: ImportedKey[] = [];
  for (const [i, entry] of keys.entries()) {
    const label = `keys[${i}]`;
    if (typeof entry !== 'object' || entry === null || typeof entry.kid !== 'string')
      throw new TypeError(`${label} must be { kid, privateKey?, publicKey? }`);
    if (!KID.test(entry.kid))
      throw new TypeError(`${label}.kid must be 1 to 64 characters of [A-Za-z0-9_.-]`);
    if (seen.has(entry.kid)) throw new TypeError(`${label}.kid repeats an earlier kid`);
    seen.add(entry.kid);
    if (i === 0 && entry.privateKey === undefined)
      throw new TypeError('keys[0] signs, so it needs a privateKey');
    if (entry.privateKey === undefined && entry.publicKey === undefined)
      throw new TypeError(`${label} needs a privateKey or a publicKey`);
    const privateKey =
      entry.privateKey === undefined
        ? undefined
        : await importKey(entry.privateKey, 'private', `${label}.privateKey`);
    const publicKey =
      entry.publicKey === undefined
        ? undefined
        : await importKey(entry.publicKey, 'public', `${label}.publicKey`);
    const publicJwk = await publicJwkOf((publicKey ?? privateKey) as CryptoKey, entry.kid, label);
    if (privateKey) await assertPair(privateKey, publicJwk, label);
    ring.push({ kid: entry.kid, publicJwk, ...(privateKey ? { privateKey } : {}) });
  }
  return ring;
}
