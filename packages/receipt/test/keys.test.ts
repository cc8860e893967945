import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { ReceiptSigner, verifyReceipt } from '../src/index.js';
import {
  ARGS_A,
  expectRefused,
  ISSUER,
  inputFor,
  NOW,
  newKey,
  OPERATION,
  partsOf,
  signerWith,
} from './helpers.js';

const expectedWith = (keys: unknown) => ({
  operation: OPERATION,
  arguments: ARGS_A,
  keys: keys as never,
  now: NOW,
});

describe('key rotation', () => {
  it('the first key signs, every key of the ring verifies, and a removed key stops verifying', async () => {
    const old = await newKey('2026-10');
    const next = await newKey('2026-11');

    // Before: only the old key.
    const before = await signerWith([old]);
    const oldReceipt = (await before.sign(inputFor({ n: 'n-old' }))).receipt;

    // Step 1: the new key published second; the old one still signs.
    const publishing = await signerWith([old, next]);
    expect(publishing.kid).toBe('2026-10');
    expect(publishing.jwks().keys.map((k) => k.kid)).toEqual(['2026-10', '2026-11']);

    // Step 2: the new key first; the old one kept by its public key only (private key destroyed).
    const rotated = await signerWith([next, { kid: old.kid, publicKey: old.publicKey }]);
    expect(rotated.kid).toBe('2026-11');
    const newReceipt = (await rotated.sign(inputFor({ n: 'n-new' }))).receipt;
    expect(partsOf(newReceipt).header.kid).toBe('2026-11');
    for (const receipt of [oldReceipt, newReceipt])
      await expect(verifyReceipt(receipt, expectedWith(rotated.jwks()))).resolves.toBeDefined();
    // A verifier that has not fetched the new set yet refuses the new receipts (publish first).
    const stale = await expectRefused(
      verifyReceipt(newReceipt, expectedWith(before.jwks())),
      'unknown_key',
    );
    // The refusal says what the verifier's set holds, so the operator sees it is the old one.
    expect(stale.message).toBe(
      'receipt refused (unknown_key): the verification key set has no usable key under its key id (the set has key ids 2026-10)',
    );

    // Step 3: after the old receipts expired, the old key is removed.
    const done = await signerWith([next]);
    await expectRefused(verifyReceipt(oldReceipt, expectedWith(done.jwks())), 'unknown_key');
    await expect(verifyReceipt(newReceipt, expectedWith(done.jwks()))).resolves.toBeDefined();
  });
});

describe('ReceiptSigner.create', () => {
  it('imports PKCS #8 / SPKI PEM and JWK keys, deriving the public key from the private one', async () => {
    const pair = generateKeyPairSync('ed25519');
    const pem = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const spki = pair.publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const jwk = pair.privateKey.export({ format: 'jwk' });
    const fromPem = await signerWith([{ kid: 'pem', privateKey: pem }]);
    const fromJwk = await signerWith([{ kid: 'jwk', privateKey: jwk as never }]);
    const withSpki = await signerWith([{ kid: 'spki', privateKey: pem, publicKey: spki }]);
    const x = pair.publicKey.export({ format: 'jwk' }).x;
    for (const s of [fromPem, fromJwk, withSpki]) {
      expect(s.jwks().keys[0]?.x).toBe(x);
      const { receipt } = await s.sign(inputFor());
      await expect(verifyReceipt(receipt, expectedWith(s.jwks()))).resolves.toBeDefined();
    }
  });

  it('takes a non-extractable pair from generateKeyPair as it is', async () => {
    const pair = await generateKeyPair('EdDSA');
    const s = await ReceiptSigner.create({ keys: [{ kid: 'k', ...pair }], issuer: ISSUER });
    expect(s.jwks().keys[0]?.kid).toBe('k');
  });

  it('refuses a ring that would sign receipts nobody can verify, or keys that are not Ed25519', async () => {
    const a = await newKey('a');
    const b = await newKey('b');
    const p256 = await generateKeyPair('ES256', { extractable: true });
    const sealed = await generateKeyPair('EdDSA'); // private key not extractable
    const cases: [unknown, RegExp][] = [
      [[], /at least one key/],
      [[{ kid: 'a', publicKey: a.publicKey }], /needs a privateKey/],
      [[a, { ...b, kid: 'a' }], /repeats/],
      [[{ ...a, kid: 'a b' }], /kid must be/],
      [[{ ...a, kid: 'x'.repeat(65) }], /kid must be/],
      [[{ kid: 'a', privateKey: a.privateKey, publicKey: b.publicKey }], /not one key pair/],
      [[{ kid: 'a', privateKey: p256.privateKey }], /not an Ed25519 private key/],
      [[{ kid: 'a', privateKey: a.publicKey }], /not an Ed25519 private key/],
      [[{ kid: 'a', privateKey: 'not a pem' }], /not an Ed25519 private key/],
      [[a, { kid: 'b', publicKey: await exportJWK(a.privateKey) }], /must not hold "d"/],
      [[a, { kid: 'b' }], /needs a privateKey or a publicKey/],
      [[{ kid: 'a', privateKey: sealed.privateKey }], /not extractable/],
    ];
    for (const [keys, message] of cases)
      await expect(ReceiptSigner.create({ keys: keys as never, issuer: ISSUER })).rejects.toThrow(
        message,
      );
  });

  it('refuses a bad issuer or lifetime', async () => {
    const keys = [await newKey('a')];
    for (const bad of [
      { issuer: '' },
      { issuer: 'x'.repeat(257) },
      { issuer: 'a\udc00' },
      { ttlSeconds: 0 },
      { ttlSeconds: 86_401 },
      { ttlSeconds: 1.5 },
    ])
      await expect(ReceiptSigner.create({ keys, issuer: ISSUER, ...bad })).rejects.toBeInstanceOf(
        TypeError,
      );
    const long = await ReceiptSigner.create({
      keys,
      issuer: ISSUER,
      ttlSeconds: 86_400,
      now: () => NOW,
    });
    expect((await long.sign(inputFor())).claims.exp).toBe(NOW / 1000 + 86_400);
  });
});
