/**
 * MRTR_RECEIPT_KEY and friends: the two key forms the README tells people to
 * make (a JWK from node:crypto, a PKCS #8 PEM as openssl writes it), rotation
 * keys, and refusals that never echo the key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { ReceiptSigner } from '@mrtr/receipt';
import { describe, expect, it } from 'vitest';
import { receiptKeysFromEnv } from '../src/receipt-keys.js';

const pair = () => generateKeyPairSync('ed25519');
/** What the README's `node -e` prints. */
const jwkOf = (k = pair()) => JSON.stringify(k.privateKey.export({ format: 'jwk' }));
/** What `openssl genpkey -algorithm ed25519` writes. */
const pemOf = (k = pair()) => k.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

async function signs(keys: Awaited<ReturnType<typeof receiptKeysFromEnv>>) {
  const signer = await ReceiptSigner.create({ keys: keys.keys, issuer: 'https://sd.example' });
  return signer;
}

describe('receiptKeysFromEnv', () => {
  it('reads a private JWK; its kid defaults to the RFC 7638 thumbprint, stable across starts', async () => {
    const jwk = jwkOf();
    const a = await receiptKeysFromEnv({ MRTR_RECEIPT_KEY: jwk });
    const b = await receiptKeysFromEnv({ MRTR_RECEIPT_KEY: jwk });
    expect(a.generated).toBe(false);
    expect(a.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(b.kid).toBe(a.kid);
    const signer = await signs(a);
    expect(signer.kid).toBe(a.kid);
    expect(signer.jwks().keys[0]).not.toHaveProperty('d');
  });

  it('reads a PKCS #8 PEM, also with \\n escapes on one line, and MRTR_RECEIPT_KID names it', async () => {
    const pem = pemOf();
    const named = await receiptKeysFromEnv({ MRTR_RECEIPT_KEY: pem, MRTR_RECEIPT_KID: '2026-11' });
    expect((await signs(named)).kid).toBe('2026-11');
    const oneLine = await receiptKeysFromEnv({ MRTR_RECEIPT_KEY: pem.replaceAll('\n', '\\n') });
    const again = await receiptKeysFromEnv({ MRTR_RECEIPT_KEY: pem });
    expect(oneLine.kid).toBe(again.kid);
  });

  it('publishes the keys of MRTR_RECEIPT_PUBLIC_KEYS after the signing key (rotation)', async () => {
    const next = pair();
    const publicJwk = { ...next.publicKey.export({ format: 'jwk' }), kid: 'next' };
    const keys = await receiptKeysFromEnv({
      MRTR_RECEIPT_KEY: jwkOf(),
      MRTR_RECEIPT_PUBLIC_KEYS: JSON.stringify({ keys: [publicJwk] }),
    });
    const jwks = (await signs(keys)).jwks();
    expect(jwks.keys.map((k) => k.kid)).toEqual([keys.kid, 'next']);
  });

  it('makes a fresh key per process when unset, never a fixed one; refuses that in production', async () => {
    const a = await receiptKeysFromEnv({});
    const b = await receiptKeysFromEnv({});
    expect(a.generated).toBe(true);
    expect(a.kid).not.toBe(b.kid);
    expect((await signs(a)).jwks().keys[0]?.x).not.toBe((await signs(b)).jwks().keys[0]?.x);
    await expect(receiptKeysFromEnv({ NODE_ENV: 'production' })).rejects.toThrow(
      /MRTR_RECEIPT_KEY must be set in production/,
    );
  });

  it('refuses what is not an Ed25519 private key without quoting it, and a private key among the public ones', async () => {
    const secretish = 'not-a-key-but-secret-0123456789';
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    for (const bad of [
      secretish,
      '{"kty":"OKP","crv":"Ed25519"',
      JSON.stringify(pair().publicKey.export({ format: 'jwk' })),
      p256.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    ]) {
      const error = await receiptKeysFromEnv({ MRTR_RECEIPT_KEY: bad }).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/^MRTR_RECEIPT_KEY is not an Ed25519 private key/);
      expect((error as Error).message).toContain('openssl genpkey -algorithm ed25519');
      expect((error as Error).message).not.toContain(secretish);
    }
    await expect(
      receiptKeysFromEnv({
        MRTR_RECEIPT_KEY: jwkOf(),
        MRTR_RECEIPT_PUBLIC_KEYS: JSON.stringify({ keys: [{ ...JSON.parse(jwkOf()), kid: 'x' }] }),
      }),
    ).rejects.toThrow(/private key/);
  });
});
