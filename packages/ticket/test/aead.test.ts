import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Aead,
  aead,
  aeadReady,
  nativeAead,
  nobleAead,
  sodiumAead,
  sodiumWrapperAead,
} from '../src/aead.js';
import { handAad, INPUT, parts, SECRET_1, sealer, subkey } from './helpers.js';

const hex = (s: string) => Uint8Array.from(Buffer.from(s.replace(/\s+/g, ''), 'hex'));
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

// draft-irtf-cfrg-xchacha-03, Appendix A.3.1: the AEAD_XChaCha20_Poly1305 test vector.
const KAT = {
  key: Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i),
  nonce: Uint8Array.from({ length: 24 }, (_, i) => 0x40 + i),
  aad: hex('50515253c0c1c2c3c4c5c6c7'),
  plain: new TextEncoder().encode(
    "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
  ),
  sealed: hex(`
    bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb
    731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452
    2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
    21f9664c97637da9768812f615c68b13b52e
    c0875924c1c7987947deafd8780acf49`),
};

function seal(impl: Aead, key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, plain: Uint8Array) {
  const out = new Uint8Array(plain.length + 16);
  impl.seal(key, nonce, aad, plain, out);
  return out;
}

describe.each([
  ['sodium, direct', sodiumAead],
  ['sodium, wrappers', sodiumWrapperAead],
  ['native', nativeAead],
  ['noble', nobleAead],
] as const)('XChaCha20-Poly1305 (%s)', (_name, impl) => {
  beforeAll(() => aeadReady);

  it('produces the draft-irtf-cfrg-xchacha A.3.1 ciphertext and tag', () => {
    expect(toHex(seal(impl, KAT.key, KAT.nonce, KAT.aad, KAT.plain))).toBe(toHex(KAT.sealed));
  });

  it('opens the A.3.1 vector and refuses it under other associated data or with a flipped bit', () => {
    expect(toHex(impl.open(KAT.key, KAT.nonce, KAT.aad, KAT.sealed) as Uint8Array)).toBe(
      toHex(KAT.plain),
    );
    expect(impl.open(KAT.key, KAT.nonce, new Uint8Array(0), KAT.sealed)).toBeNull();
    for (const at of [0, 50, KAT.sealed.length - 16, KAT.sealed.length - 1]) {
      const bad = KAT.sealed.slice();
      bad[at] = (bad[at] as number) ^ 0x01;
      expect(impl.open(KAT.key, KAT.nonce, KAT.aad, bad)).toBeNull();
    }
    expect(impl.open(KAT.key, KAT.nonce, KAT.aad, KAT.sealed.subarray(0, 15))).toBeNull();
  });

  it('works on byte views at any offset (tickets decode into pooled Buffers)', () => {
    const backing = new Uint8Array(200);
    const nonce = backing.subarray(3, 27);
    nonce.set(KAT.nonce);
    const key = new Uint8Array(40).subarray(5, 37);
    key.set(KAT.key);
    expect(toHex(seal(impl, key, nonce, KAT.aad, KAT.plain))).toBe(toHex(KAT.sealed));
  });
});

describe('the sodium, native and noble implementations', () => {
  it('tickets use libsodium once it is ready (OpenSSL until then: the same bytes, below)', async () => {
    await aeadReady;
    expect(aead().name).toBe('sodium');
  });

  it("libsodium's module is called directly, and every byte it was lent is zeroed after", async () => {
    await aeadReady;
    const sodium = (await import('libsodium-wrappers')).default as unknown as {
      libsodium: { HEAPU8: Uint8Array };
    };
    const key = new Uint8Array(32).fill(0xa5);
    const plain = new Uint8Array(300).fill(0x5a);
    const sealed = seal(sodiumAead, key, KAT.nonce, KAT.aad, plain);
    expect(toHex(sodiumAead.open(key, KAT.nonce, KAT.aad, sealed) as Uint8Array)).toBe(
      toHex(plain),
    );
    // A run of 32 key bytes or of the plaintext anywhere in the heap would be what a call left behind.
    const heap = Buffer.from(sodium.libsodium.HEAPU8.buffer);
    expect(heap.includes(Buffer.from(key))).toBe(false);
    expect(heap.includes(Buffer.from(plain.subarray(0, 64)))).toBe(false);
    // A call that throws half-way (an output of the wrong size) leaves nothing behind either.
    const other = new Uint8Array(32).fill(0xc3);
    expect(() => sodiumAead.seal(other, KAT.nonce, KAT.aad, plain, new Uint8Array(5))).toThrow(
      RangeError,
    );
    expect(Buffer.from(sodium.libsodium.HEAPU8.buffer).includes(Buffer.from(other))).toBe(false);
    // Sizes libsodium would read past or short of are refused, as the wrappers refuse them.
    expect(() => sodiumAead.open(new Uint8Array(16), KAT.nonce, KAT.aad, sealed)).toThrow(
      TypeError,
    );
    expect(() => sodiumAead.open(key, KAT.nonce.subarray(0, 12), KAT.aad, sealed)).toThrow(
      TypeError,
    );
    // The wrappers' API leaves its copies in freed memory: the search above can see them.
    sodiumWrapperAead.open(key, KAT.nonce, KAT.aad, sealed);
    expect(Buffer.from(sodium.libsodium.HEAPU8.buffer).includes(Buffer.from(key))).toBe(true);
  });

  it("a ticket sealed through libsodium opens by hand with OpenSSL's and noble's implementation", async () => {
    await aeadReady;
    const { ticket } = sealer().seal(INPUT);
    const body = Buffer.from(parts(ticket).body, 'base64url');
    const aad = handAad('v1', 'k1', INPUT.op, INPUT.argsDigest);
    for (const impl of [nativeAead, nobleAead]) {
      const plain = impl.open(subkey(SECRET_1, 'k1'), body.subarray(0, 24), aad, body.subarray(24));
      expect(plain).not.toBeNull();
      expect(Buffer.from(plain as Uint8Array).includes(Buffer.from(INPUT.sub))).toBe(true);
    }
  });

  it('agree byte for byte on 2,000 random keys, nonces, associated data and plaintexts', () => {
    const bytes = (min: number, max: number) => fc.uint8Array({ minLength: min, maxLength: max });
    fc.assert(
      fc.property(
        bytes(32, 32),
        bytes(24, 24),
        bytes(0, 200),
        bytes(0, 300),
        (key, nonce, aad, plain) => {
          const a = seal(nativeAead, key, nonce, aad, plain);
          const b = seal(nobleAead, key, nonce, aad, plain);
          const c = seal(sodiumAead, key, nonce, aad, plain);
          const d = seal(sodiumWrapperAead, key, nonce, aad, plain);
          expect(toHex(a)).toBe(toHex(b));
          expect(toHex(c)).toBe(toHex(a));
          expect(toHex(d)).toBe(toHex(a));
          expect(toHex(sodiumWrapperAead.open(key, nonce, aad, c) as Uint8Array)).toBe(
            toHex(plain),
          );
          expect(toHex(sodiumAead.open(key, nonce, aad, a) as Uint8Array)).toBe(toHex(plain));
          expect(toHex(nativeAead.open(key, nonce, aad, c) as Uint8Array)).toBe(toHex(plain));
          expect(toHex(xchacha20poly1305(key, nonce, aad).encrypt(plain))).toBe(toHex(a));
          expect(toHex(nativeAead.open(key, nonce, aad, b) as Uint8Array)).toBe(toHex(plain));
          expect(toHex(nobleAead.open(key, nonce, aad, a) as Uint8Array)).toBe(toHex(plain));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
