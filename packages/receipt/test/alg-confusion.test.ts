import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWTVerifyGetKey, SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { RECEIPT_TYPE, verifyReceipt } from '../src/index.js';
import {
  ARGS_A,
  expectRefused,
  inputFor,
  NOW,
  newKey,
  OPERATION,
  partsOf,
  signerWith,
} from './helpers.js';

const key = await newKey('r1');
const signer = await signerWith([key]);
const jwks = signer.jwks();
const expected = { operation: OPERATION, arguments: ARGS_A, keys: jwks, now: NOW };
const { receipt } = await signer.sign(inputFor());
const { payload } = partsOf(receipt);
const x = jwks.keys[0]?.x as string;

/** A resolver that records whether it was asked, and hands back `key`. */
function spyResolver(key: unknown): { resolver: JWTVerifyGetKey; calls: () => number } {
  let calls = 0;
  return {
    resolver: (async () => {
      calls++;
      return key;
    }) as JWTVerifyGetKey,
    calls: () => calls,
  };
}

describe('algorithm confusion', () => {
  it('alg none (an unsecured JWT): unsupported_algorithm', async () => {
    const unsecured = new UnsecuredJWT(payload)
      .setIssuedAt(payload.iat as number)
      .setExpirationTime(payload.exp as number)
      .encode();
    await expectRefused(verifyReceipt(unsecured, expected), 'unsupported_algorithm');
    const typed = `${Buffer.from(JSON.stringify({ alg: 'none', kid: 'r1', typ: RECEIPT_TYPE })).toString('base64url')}.${partsOf(receipt).payloadB64}.`;
    await expectRefused(verifyReceipt(typed, expected), 'unsupported_algorithm');
  });

  it('HS256 keyed with the published public key (bytes, or its JWK text): unsupported_algorithm, no key looked up', async () => {
    for (const secret of [
      Buffer.from(x, 'base64url'),
      Buffer.from(JSON.stringify(jwks.keys[0])),
      Buffer.from(x),
    ]) {
      const forged = await new SignJWT(payload)
        .setProtectedHeader({ alg: 'HS256', kid: 'r1', typ: RECEIPT_TYPE })
        .sign(new Uint8Array(secret));
      const spy = spyResolver(new Uint8Array(secret));
      await expectRefused(
        verifyReceipt(forged, { ...expected, keys: spy.resolver }),
        'unsupported_algorithm',
      );
      expect(spy.calls()).toBe(0);
      await expectRefused(verifyReceipt(forged, expected), 'unsupported_algorithm');
    }
  });

  it('ES256 and RS256 by a key under our kid: unsupported_algorithm', async () => {
    const ec = await generateKeyPair('ES256');
    const rsa = await generateKeyPair('RS256');
    for (const [alg, pair] of [
      ['ES256', ec],
      ['RS256', rsa],
    ] as const) {
      const forged = await new SignJWT(payload)
        .setProtectedHeader({ alg, kid: 'r1', typ: RECEIPT_TYPE })
        .sign(pair.privateKey);
      const withTheirKey = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'r1', alg }] };
      await expectRefused(verifyReceipt(forged, expected), 'unsupported_algorithm');
      await expectRefused(
        verifyReceipt(forged, { ...expected, keys: withTheirKey }),
        'unsupported_algorithm',
      );
    }
  });

  it('the fully-specified alg Ed25519 (RFC 9864) is refused too: receipts use EdDSA only', async () => {
    const other = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'Ed25519', kid: 'r1', typ: RECEIPT_TYPE })
      .sign(key.privateKey);
    await expectRefused(verifyReceipt(other, expected), 'unsupported_algorithm');
  });

  it('a resolver that hands back anything but an Ed25519 public key: unknown_key', async () => {
    const p256 = await generateKeyPair('ES256');
    const node = generateKeyPairSync('ed25519');
    const wrong: unknown[] = [
      new Uint8Array(Buffer.from(x, 'base64url')), // an HMAC secret
      p256.publicKey,
      key.privateKey, // private, not public
      node.privateKey,
      { kty: 'oct', k: x },
      { ...jwks.keys[0], d: x }, // a private JWK
      { kty: 'OKP', crv: 'Ed448', x },
    ];
    for (const k of wrong) {
      const spy = spyResolver(k);
      await expectRefused(
        verifyReceipt(receipt, { ...expected, keys: spy.resolver }),
        'unknown_key',
      );
      expect(spy.calls()).toBe(1);
    }
  });

  it('a resolver handing back our Ed25519 public key in any form jose takes: accepted', async () => {
    const node = await import('node:crypto');
    const nodePublic = node.createPublicKey({ key: jwks.keys[0] as never, format: 'jwk' });
    const good: unknown[] = [key.publicKey, jwks.keys[0], nodePublic];
    for (const k of good)
      await expect(
        verifyReceipt(receipt, { ...expected, keys: spyResolver(k).resolver }),
      ).resolves.toBeDefined();
  });

  it('a JWKS whose entry for our kid is a symmetric key: unknown_key', async () => {
    const keys = { keys: [{ kty: 'oct', k: x, kid: 'r1' }] };
    await expectRefused(verifyReceipt(receipt, { ...expected, keys }), 'unknown_key');
  });

  // helper-152 F5: jose refuses the set, which read as keys_unavailable (an outage to retry).
  it('a JWKS holding our private JWK under our kid: unknown_key, not keys_unavailable', async () => {
    const privateJwk = { ...(await exportJWK(key.privateKey)), kid: 'r1', alg: 'EdDSA' };
    const keys = { keys: [privateJwk] };
    const error = await verifyReceipt(receipt, { ...expected, keys }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unknown_key' });
    expect(String((error as Error).message)).toMatch(/no usable public key under it/);
    // helper-156 L4: other keys jose refuses in a set in hand are no outage either.
    const broken = [
      { kty: 'OKP', crv: 'Ed25519', kid: 'r1' }, // no x
      { kty: 'OKP', crv: 'Ed25519', x: 'not base64url!', kid: 'r1' },
    ];
    for (const k of broken)
      await expectRefused(
        verifyReceipt(receipt, { ...expected, keys: { keys: [k] } }),
        'unknown_key',
      );
  });

  it('a JWKS with two keys under one kid, or ours twice: ambiguous_key, not a guess', async () => {
    const twin = await newKey('r1');
    const keys = { keys: [...jwks.keys, { ...(await exportJWK(twin.publicKey)), kid: 'r1' }] };
    await expectRefused(verifyReceipt(receipt, { ...expected, keys }), 'ambiguous_key');
    const twice = { keys: [...jwks.keys, ...jwks.keys] };
    await expectRefused(verifyReceipt(receipt, { ...expected, keys: twice }), 'ambiguous_key');
  });
});
