/**
 * XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03 §2.3): HChaCha20 turns the
 * key and the first 16 nonce bytes into a subkey, then ChaCha20-Poly1305
 * (RFC 8439) runs under that subkey with the nonce `0x00000000 ‖ nonce[16..24]`.
 *
 * Three implementations of the same function; tests check they produce
 * identical bytes. `sodium` is libsodium's own
 * `crypto_aead_xchacha20poly1305_ietf_*` (libsodium-wrappers, WebAssembly):
 * one call per ticket, about a third of the cost of the others, because
 * Node's OpenSSL builds a new cipher context for every `createCipheriv` and
 * cannot re-key one. Its WebAssembly compiles asynchronously, so until
 * {@link aeadReady} settles (a few milliseconds after import) tickets use
 * `native`: the RFC 8439 AEAD in Node's OpenSSL with HChaCha20 from noble,
 * or, where this Node has no `chacha20-poly1305` cipher (a FIPS-mode
 * OpenSSL), `noble`, noble's pure-JS XChaCha20-Poly1305.
 */
import { createCipheriv, createDecipheriv, getCiphers } from 'node:crypto';
import { hchacha, xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import sodium from 'libsodium-wrappers';

export const NONCE_BYTES = 24;
export const TAG_BYTES = 16;

/** Seal and open with XChaCha20-Poly1305; `open` returns `null` when the tag does not verify. */
export interface Aead {
  readonly name: 'sodium' | 'native' | 'noble';
  /** Write `plain ‖ tag` encrypted into `out` (length `plain.length + 16`). */
  seal(
    key: Uint8Array,
    nonce: Uint8Array,
    aad: Uint8Array,
    plain: Uint8Array,
    out: Uint8Array,
  ): void;
  /** The plaintext of `sealed` (ciphertext ‖ tag), or `null` if it does not authenticate. */
  open(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, sealed: Uint8Array): Uint8Array | null;
}

export const nobleAead: Aead = {
  name: 'noble',
  seal(key, nonce, aad, plain, out) {
    xchacha20poly1305(key, nonce, aad).encrypt(plain, out);
  },
  open(key, nonce, aad, sealed) {
    try {
      return xchacha20poly1305(key, nonce, aad).decrypt(sealed);
    } catch {
      return null;
    }
  },
};

// "expand 32-byte k" as native-order words; hchacha swaps them on big-endian hosts itself.
const SIGMA = new Uint32Array(new TextEncoder().encode('expand 32-byte k').buffer);

// Scratch words, reused: calls never interleave (no await), and OpenSSL copies the key it is given.
const k32 = new Uint32Array(8);
const k8 = new Uint8Array(k32.buffer);
const n32 = new Uint32Array(4);
const n8 = new Uint8Array(n32.buffer);
const sub32 = new Uint32Array(8);
const subkey = new Uint8Array(sub32.buffer);
const iv = new Uint8Array(12);

/**
 * HChaCha20(key, nonce[0..16]) into `subkey`, and the 12-byte RFC 8439 nonce
 * `0x00000000 ‖ nonce[16..24]` into `iv`. Copies go through aligned scratch
 * words whatever the callers' byte offsets.
 */
function derive(key: Uint8Array, nonce: Uint8Array): void {
  k8.set(key);
  n8.set(nonce.subarray(0, 16));
  hchacha(SIGMA, k32, n32, sub32);
  iv.set(nonce.subarray(16, 24), 4);
}

export const nativeAead: Aead = {
  name: 'native',
  seal(key, nonce, aad, plain, out) {
    derive(key, nonce);
    const cipher = createCipheriv('chacha20-poly1305', subkey, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad, { plaintextLength: plain.length });
    out.set(cipher.update(plain), 0);
    cipher.final();
    out.set(cipher.getAuthTag(), plain.length);
  },
  open(key, nonce, aad, sealed) {
    if (sealed.length < TAG_BYTES) return null;
    derive(key, nonce);
    const body = sealed.subarray(0, sealed.length - TAG_BYTES);
    const decipher = createDecipheriv('chacha20-poly1305', subkey, iv, {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(aad, { plaintextLength: body.length });
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    // OpenSSL hands out the plaintext before it checks the tag; it is dropped unless final() passes.
    const plain = decipher.update(body);
    try {
      decipher.final();
    } catch {
      plain.fill(0);
      return null;
    }
    return plain;
  },
};

export const sodiumAead: Aead = {
  name: 'sodium',
  seal(key, nonce, aad, plain, out) {
    out.set(sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(plain, aad, null, nonce, key), 0);
  },
  open(key, nonce, aad, sealed) {
    if (sealed.length < TAG_BYTES) return null;
    try {
      return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(null, sealed, aad, nonce, key);
    } catch {
      return null; // libsodium throws when the tag does not verify
    }
  },
};

let chosen: Aead = getCiphers().includes('chacha20-poly1305') ? nativeAead : nobleAead;

/**
 * Resolves (to `undefined`) once libsodium's WebAssembly is compiled, a few
 * milliseconds after this package is imported; from then on every
 * `TicketSealer` seals and opens with libsodium's XChaCha20-Poly1305
 * (draft-irtf-cfrg-xchacha-03). Before that, and where WebAssembly cannot run
 * (`--jitless`, a policy that forbids it), tickets use Node's OpenSSL
 * ChaCha20-Poly1305 with HChaCha20 from `@noble/ciphers`: the same bytes,
 * about three times the CPU per ticket. Awaiting it is never needed for
 * correctness, only for steady speed from the first ticket. Never rejects.
 */
export const aeadReady: Promise<void> = sodium.ready.then(
  () => {
    chosen = sodiumAead;
  },
  () => undefined,
);

/** The implementation tickets use on this runtime now (see {@link aeadReady}). */
export function aead(): Aead {
  return chosen;
}
