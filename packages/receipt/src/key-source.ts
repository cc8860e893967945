import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
  type RemoteJWKSetOptions,
} from 'jose';
import { ReceiptError } from './errors.js';

/**
 * Where a verifier finds the public keys, by the receipt's `kid`:
 * - a JWKS object (RFC 7517 §5), e.g. {@link ReceiptSigner.jwks} or the
 *   parsed JSON of a published set;
 * - a `URL` of a published JWKS, fetched as {@link remoteKeySet} fetches it
 *   (5 s timeout; a body over {@link MAX_JWKS_BYTES} is refused as
 *   `keys_unavailable` instead of read into memory), but a new set, so a new
 *   fetch, per call: to verify many receipts, pass `remoteKeySet(url)` once
 *   made, which caches and refetches on an unknown `kid`;
 * - a jose key resolver `(protectedHeader, token) => key`, such as
 *   `createLocalJWKSet(jwks)` or {@link remoteKeySet}. (jose's own
 *   `createRemoteJWKSet(url)` reads a response whole, without the bound.)
 *
 * Only Ed25519 public keys are used: a resolver that yields anything else
 * (an HMAC secret, an RSA or P-256 key, a private key) gets `unknown_key`.
 */
export type ReceiptKeySource = JSONWebKeySet | URL | JWTVerifyGetKey;

/** A resolved key as jose may hand it back: a CryptoKey, a Node KeyObject, a JWK, or bytes. */
type ResolvedKey = Awaited<ReturnType<JWTVerifyGetKey>>;

function isEd25519PublicKey(key: ResolvedKey): boolean {
  if (typeof key !== 'object' || key === null || key instanceof Uint8Array) return false;
  const k = key as {
    type?: unknown;
    algorithm?: { name?: unknown };
    asymmetricKeyType?: unknown;
    kty?: unknown;
    crv?: unknown;
    x?: unknown;
    d?: unknown;
  };
  if (typeof CryptoKey !== 'undefined' && key instanceof CryptoKey)
    return k.type === 'public' && k.algorithm?.name === 'Ed25519';
  if (k.asymmetricKeyType !== undefined)
    return k.type === 'public' && k.asymmetricKeyType === 'ed25519'; // node:crypto KeyObject
  return k.kty === 'OKP' && k.crv === 'Ed25519' && typeof k.x === 'string' && k.d === undefined;
}

/**
 * Largest JWKS a `URL` key source reads, bytes (1 MiB: thousands of Ed25519
 * keys). jose reads a response whole; a host that sends without end would
 * otherwise fill the verifier's memory before the timeout.
 */
export const MAX_JWKS_BYTES = 1024 * 1024;

/** `fetch`, with the body read up to {@link MAX_JWKS_BYTES} and refused past it. */
async function fetchBounded(url: string, init: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  if (response.body === null) return response;
  const tooLarge = () => new Error(`the JWKS at ${url} is larger than ${MAX_JWKS_BYTES} bytes`);
  if (Number(response.headers.get('content-length')) > MAX_JWKS_BYTES) {
    await response.body.cancel().catch(() => {});
    throw tooLarge();
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > MAX_JWKS_BYTES) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new Response(Buffer.concat(chunks), {
    status: response.status,
    headers: response.headers,
  });
}

/**
 * jose's `createRemoteJWKSet(url, options)` (RFC 7517 key set over HTTP:
 * 5 s timeout, keys cached and fetched again on an unknown `kid` after a 30 s
 * cooldown, by default), whose response body is read up to
 * {@link MAX_JWKS_BYTES} and refused past it, so a key host that sends
 * without end cannot fill the verifier's memory. Make it once and pass it as
 * `keys` to verify many receipts.
 * @param url the published JWKS, e.g. `https://deleter.example/.well-known/jwks.json`.
 * @param options jose's `RemoteJWKSetOptions` (`timeoutDuration`, `cooldownDuration`,
 *   `cacheMaxAge` in milliseconds; `headers`), but its fetch, which this sets.
 * @returns a jose key resolver; a fetch that fails or is too large rejects, and
 *   `verifyReceipt` reports it as `keys_unavailable`.
 */
export function remoteKeySet(
  url: URL,
  options: Omit<RemoteJWKSetOptions, typeof customFetch> = {},
): ReturnType<typeof createRemoteJWKSet> {
  return createRemoteJWKSet(url, { ...options, [customFetch]: fetchBounded });
}

function innerResolver(source: ReceiptKeySource): JWTVerifyGetKey {
  if (typeof source === 'function') return source;
  if (source instanceof URL) return remoteKeySet(source);
  try {
    return createLocalJWKSet(source);
  } catch {
    throw new TypeError('options.keys is not a JSON Web Key Set ({ keys: [...] })');
  }
}

/**
 * What the verifier's own key set holds, for the message of an `unknown_key`
 * refusal: the key ids of a JWKS object, or where a URL's set is fetched from.
 */
function describeKeySet(source: ReceiptKeySource): string {
  if (source instanceof URL) return ` (keys fetched from ${source.origin}${source.pathname})`;
  if (typeof source === 'function') return '';
  const kids = (source.keys ?? []).map((k) => (typeof k.kid === 'string' ? k.kid : '(no kid)'));
  return kids.length === 0 ? ' (the set is empty)' : ` (the set has key ids ${kids.join(', ')})`;
}

/**
 * A jose key resolver over `source` that fails closed with a
 * {@link ReceiptError}: `unknown_key` when no key has the receipt's `kid`,
 * the key is not an Ed25519 public key, or a JWKS given as an object holds
 * one jose refuses (a private key, a missing or malformed member), `ambiguous_key` when more than one
 * has it, `keys_unavailable`
 * when the resolver itself fails (network, timeout, a fetched set that is invalid).
 * @throws {TypeError} at once for a `source` that is not a JWKS, URL or function.
 */
export function receiptKeyResolver(source: ReceiptKeySource): JWTVerifyGetKey {
  if (typeof source !== 'function' && (typeof source !== 'object' || source === null))
    throw new TypeError('options.keys must be a JWKS, a URL or a key resolver');
  const inner = innerResolver(source);
  const known = describeKeySet(source);
  return async (header, token) => {
    let key: ResolvedKey;
    try {
      key = await inner(header, token);
    } catch (error) {
      if (error instanceof ReceiptError) throw error;
      if (error instanceof errors.JWKSMultipleMatchingKeys) throw new ReceiptError('ambiguous_key');
      if (error instanceof errors.JWKSNoMatchingKey)
        throw new ReceiptError('unknown_key', { detail: known });
      // A set in hand is read without I/O: whatever jose refuses in it (a private key, a key
      // with a missing or malformed member) is no outage, and retrying cannot help.
      if (typeof source === 'object' && !(source instanceof URL))
        throw new ReceiptError('unknown_key', {
          detail: ` (the set has no usable public key under it: ${shownReason(error)})`,
        });
      throw new ReceiptError('keys_unavailable', { cause: error });
    }
    if (!isEd25519PublicKey(key))
      throw new ReceiptError('unknown_key', {
        detail: ' (the key found for it is not an Ed25519 public key)',
      });
    return key;
  };
}

/** jose's reason for refusing a key of a set in hand, as a refusal quotes it: one line, bounded. */
function shownReason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 120);
}
