/**
 * XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03 §2.3): HChaCha20 turns the
 * key and the first 16 nonce bytes into a subkey, then ChaCha20-Poly1305
 * (RFC 8439) runs under that subkey with the nonce `0x00000000 ‖ nonce[16..24]`.
 *
 * Two implementations of the same function. `native` runs the RFC 8439 AEAD
 * in Node's OpenSSL (about twice as fast, which the speed target needs) and
 * HChaCha20 from noble; `noble` is noble's pure-JS XChaCha20-Poly1305. The
 * native one is used when this Node has the `chacha20-poly1305` cipher (a
 * FIPS-mode OpenSSL does not); tests check both produce identical bytes.
 */
import { createCipheriv, createDecipheriv, getCiphers } from 'node:crypto';
import { hchacha, xchacha20poly1305 } from '@noble/ciphers/chacha.js';

export const NONCE_BYTES = 24;
export const TAG_BYTES = 16;

/** Seal and open with XChaCha20-Poly1305; `open` returns `null` when the tag does not verify. */
export interface Aead {
  readonly name: 'native' | 'noble';
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

/** The implementation tickets use on this runtime. */
export const aead: Aead = getCiphers().includes('chacha20-poly1305') ? nativeAead : nobleAead;
