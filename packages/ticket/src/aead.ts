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

/**
 * libsodium's XChaCha20-Poly1305 through its wrappers' API: every call
 * copies each input into memory it allocates in the WebAssembly heap, and
 * frees it after; the fallback of {@link sodiumAead}.
 */
export const sodiumWrapperAead: Aead = {
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

/**
 * The parts of libsodium's own module (`sodium.libsodium`, the Emscripten
 * build the wrappers call) that {@link sodiumAead} calls directly. Lengths
 * are 64-bit in C: each is passed as its low and high 32 bits.
 */
interface SodiumModule {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  _crypto_aead_xchacha20poly1305_ietf_encrypt(...args: number[]): number;
  _crypto_aead_xchacha20poly1305_ietf_decrypt(...args: number[]): number;
}

/** libsodium's module once the wrappers are ready and expose it; `undefined` until then or where they do not. */
let direct: SodiumModule | undefined;

function moduleOf(wrappers: unknown): SodiumModule | undefined {
  const m = (wrappers as { libsodium?: Partial<SodiumModule> } | undefined)?.libsodium;
  return m &&
    m.HEAPU8 instanceof Uint8Array &&
    typeof m._malloc === 'function' &&
    typeof m._free === 'function' &&
    typeof m._crypto_aead_xchacha20poly1305_ietf_encrypt === 'function' &&
    typeof m._crypto_aead_xchacha20poly1305_ietf_decrypt === 'function'
    ? (m as SodiumModule)
    : undefined;
}

/** Where the direct calls lay out key, nonce, associated data, input and output: kept, grown when too small. */
let scratch = 0;
let scratchBytes = 0;

/**
 * The address of `bytes` bytes of the WebAssembly heap, zeroed by every
 * caller after use, however the call ends (a smaller region is zeroed and
 * freed when it grows).
 * @throws {RangeError} when libsodium's heap cannot grow that far.
 */
function scratchOf(lib: SodiumModule, bytes: number): number {
  if (bytes <= scratchBytes) return scratch;
  const size = Math.max(bytes, 1024);
  const at = lib._malloc(size);
  if (at === 0) throw new RangeError(`libsodium could not allocate ${size} bytes`);
  if (scratch !== 0) {
    lib.HEAPU8.fill(0, scratch, scratch + scratchBytes);
    lib._free(scratch);
  }
  scratch = at;
  scratchBytes = size;
  return at;
}

/** What libsodium would refuse (the wrappers check it): its functions read exactly 32 key and 24 nonce bytes. */
function checkSizes(key: Uint8Array, nonce: Uint8Array): void {
  if (key.length !== 32)
    throw new TypeError(`XChaCha20-Poly1305 key of ${key.length} bytes, not 32`);
  if (nonce.length !== NONCE_BYTES)
    throw new TypeError(`XChaCha20-Poly1305 nonce of ${nonce.length} bytes, not ${NONCE_BYTES}`);
}

/**
 * Copy key, nonce, associated data and `data` one after another into the
 * kept region of libsodium's heap, with `outputBytes` more after them, and
 * run `call` with the heap and their addresses; the region is zeroed after,
 * however the call ends.
 */
function lend<T>(
  lib: SodiumModule,
  key: Uint8Array,
  nonce: Uint8Array,
  aad: Uint8Array,
  data: Uint8Array,
  outputBytes: number,
  call: (heap: Uint8Array, k: number, n: number, ad: number, d: number, out: number) => T,
): T {
  const used = key.length + nonce.length + aad.length + data.length + outputBytes;
  const k = scratchOf(lib, used);
  try {
    const n = k + key.length;
    const ad = n + nonce.length;
    const d = ad + aad.length;
    const heap = lib.HEAPU8; // read after any allocation: a grown heap is a new buffer
    heap.set(key, k);
    heap.set(nonce, n);
    heap.set(aad, ad);
    heap.set(data, d);
    return call(heap, k, n, ad, d, d + data.length);
  } finally {
    lib.HEAPU8.fill(0, k, k + used);
  }
}

/**
 * libsodium's `crypto_aead_xchacha20poly1305_ietf_encrypt` and `_decrypt`,
 * called on its module directly: inputs are copied into one region of the
 * WebAssembly heap kept from call to call, instead of the wrappers' five
 * allocations, copies and frees per call, and the region is zeroed after
 * each call, however it ends (the wrappers free key and plaintext without).
 * The same function of the same library: tests check it byte for byte
 * against the wrappers, OpenSSL and noble. Used when the wrappers expose
 * their module (`sodium.libsodium`, as 0.8 does), else the wrappers' API.
 * Lengths are 64-bit in C: each is passed as its low and high 32 bits.
 */
export const sodiumAead: Aead = {
  name: 'sodium',
  seal(key, nonce, aad, plain, out) {
    const lib = direct;
    if (!lib) return sodiumWrapperAead.seal(key, nonce, aad, plain, out);
    checkSizes(key, nonce);
    const sealed = plain.length + TAG_BYTES;
    if (out.length !== sealed)
      throw new RangeError(`seal output of ${out.length} bytes, not ${sealed}`);
    lend(lib, key, nonce, aad, plain, sealed, (heap, k, n, ad, m, c) => {
      const status = lib._crypto_aead_xchacha20poly1305_ietf_encrypt(
        c,
        0,
        m,
        plain.length,
        0,
        ad,
        aad.length,
        0,
        0,
        n,
        k,
      );
      if (status !== 0) throw new Error('libsodium could not seal');
      out.set(heap.subarray(c, c + sealed), 0);
    });
  },
  open(key, nonce, aad, sealed) {
    if (sealed.length < TAG_BYTES) return null;
    const lib = direct;
    if (!lib) return sodiumWrapperAead.open(key, nonce, aad, sealed);
    checkSizes(key, nonce);
    const plainLength = sealed.length - TAG_BYTES;
    return lend(lib, key, nonce, aad, sealed, plainLength, (heap, k, n, ad, c, m) => {
      const status = lib._crypto_aead_xchacha20poly1305_ietf_decrypt(
        m,
        0,
        0,
        c,
        sealed.length,
        0,
        ad,
        aad.length,
        0,
        n,
        k,
      );
      return status === 0 ? heap.slice(m, m + plainLength) : null;
    });
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
    direct = moduleOf(sodium);
    chosen = sodiumAead;
  },
  () => undefined,
);

/** The implementation tickets use on this runtime now (see {@link aeadReady}). */
export function aead(): Aead {
  return chosen;
}
