import { digestJson } from '@mrtr/digest';
import { MemoryReplayStore } from '@mrtr/replay';
import { describe, expect, it, vi } from 'vitest';
import {
  actionMismatch,
  type ConfirmedOperation,
  RECEIPT_TYPE,
  receiptIssuer,
  verifyReceipt,
  verifyReceiptSignature,
} from '../src/index.js';
import {
  ARGS_A,
  ARGS_B,
  expectRefused,
  ISSUER,
  inputFor,
  NOW,
  newKey,
  OPERATION,
  partsOf,
  QUESTION,
  signerWith,
  signRaw,
} from './helpers.js';

const key = await newKey('r1');
const signer = await signerWith([key]);
const expected = { operation: OPERATION, arguments: ARGS_A, keys: signer.jwks(), now: NOW };

describe('ReceiptSigner.sign', () => {
  it('makes a compact JWS with alg EdDSA, the active kid and the receipt typ', async () => {
    const { receipt } = await signer.sign(inputFor());
    expect(partsOf(receipt).header).toEqual({ alg: 'EdDSA', kid: 'r1', typ: RECEIPT_TYPE });
  });

  it('adds iss, iat, exp = iat + ttl and a fresh 128-bit jti to what it is given', async () => {
    const a = await signer.sign(inputFor());
    const b = await signer.sign(inputFor());
    expect(a.claims).toMatchObject({
      ...inputFor(),
      iss: ISSUER,
      iat: NOW / 1000,
      exp: NOW / 1000 + 300,
    });
    expect(a.claims.jti).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(b.claims.jti).not.toBe(a.claims.jti);
    expect(partsOf(a.receipt).payload).toEqual(a.claims);
  });

  it('carries the passkey credential id only for lvl passkey', async () => {
    const { claims } = await signer.sign(inputFor({ lvl: 'passkey', cred: 'AQIDBAUGBwg' }));
    expect(claims).toMatchObject({ lvl: 'passkey', cred: 'AQIDBAUGBwg' });
    expect('cred' in (await signer.sign(inputFor({ lvl: 'url' }))).claims).toBe(false);
  });

  it.each([
    ['sub', { sub: '' }],
    ['sub', { sub: 'user\ud800' }],
    ['op', { op: 42 as unknown as string }],
    ['ad', { ad: 'sha256:short' }],
    ['ad', { ad: digestJson(ARGS_A).replace('sha256:', 'sha512:') }],
    ['qd', { qd: 'not a digest' }],
    ['lvl', { lvl: 'sms' as 'form' }],
    ['n', { n: '' }],
    ['n', { n: 'x'.repeat(257) }],
    // A replay store's key may not hold U+0000: a verifier with a store would throw on it.
    ['n', { n: 'a\u0000b' }],
    ['cred', { lvl: 'passkey' as const }],
    ['cred', { lvl: 'passkey' as const, cred: 'not base64url!' }],
    ['cred', { lvl: 'form' as const, cred: 'AQID' }],
  ])('refuses a bad %s with a TypeError naming it, and signs nothing', async (name, bad) => {
    await expect(signer.sign(inputFor(bad))).rejects.toThrow(
      new RegExp(`^receipt claim ${name} must be`),
    );
  });

  it('refuses to sign a receipt longer than any verifier decodes, each claim within its bound', async () => {
    // A control character is six characters in JSON: 1,024 of them pass each claim's bound.
    const c = '\u0001';
    await expect(
      signer.sign(inputFor({ sub: c.repeat(256), op: c.repeat(512), n: c.repeat(256) })),
    ).rejects.toThrow(/over MAX_RECEIPT_LENGTH \(8192\)/);
    expect((await signer.sign(inputFor({ sub: c.repeat(256) }))).receipt.length).toBeLessThan(8192);
  });

  it('refuses a signed n holding U+0000 as malformed, with or without a store', async () => {
    const { receipt } = await signer.sign(inputFor());
    const { header, payload } = partsOf(receipt);
    const crafted = await signRaw(header, { ...payload, n: 'a\u0000b' }, key.privateKey);
    await expectRefused(verifyReceipt(crafted, expected), 'malformed');
    // With a store the verifier checks at the system time: set it to the receipt's.
    const { now: _, ...atSystemTime } = expected;
    vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
    try {
      await expectRefused(
        verifyReceipt(crafted, { ...atSystemTime, store: new MemoryReplayStore() }),
        'malformed',
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses input that is not an object', async () => {
    await expect(signer.sign(null as never)).rejects.toBeInstanceOf(TypeError);
  });

  it('publishes the public keys only, as a JWKS of Ed25519 keys', () => {
    const jwks = signer.jwks();
    expect(jwks.keys).toHaveLength(1);
    expect(Object.keys(jwks.keys[0] ?? {}).sort()).toEqual([
      'alg',
      'crv',
      'kid',
      'kty',
      'use',
      'x',
    ]);
    expect(jwks.keys[0]).toMatchObject({
      kty: 'OKP',
      crv: 'Ed25519',
      kid: 'r1',
      alg: 'EdDSA',
      use: 'sig',
    });
    (jwks.keys[0] as { x: string }).x = 'changed';
    expect(signer.jwks().keys[0]?.x).not.toBe('changed'); // a copy each call
  });
});

describe('verifyReceipt', () => {
  it('accepts the receipt for exactly this operation and these arguments, and returns its claims', async () => {
    const { receipt, claims } = await signer.sign(inputFor());
    await expect(verifyReceipt(receipt, expected)).resolves.toEqual({ claims, kid: 'r1' });
  });

  it('recomputes the RFC 8785 digest: member order and number spelling do not matter', async () => {
    const { receipt } = await signer.sign(inputFor({ ad: digestJson({ b: [1.0, 2], a: 'x' }) }));
    const verified = await verifyReceipt(receipt, {
      ...expected,
      arguments: JSON.parse('{"a":"x","b":[1,2.00]}'),
    });
    expect(verified.kid).toBe('r1');
  });

  it('refuses a receipt for svc A presented to delete svc B', async () => {
    const { receipt } = await signer.sign(inputFor());
    await expectRefused(
      verifyReceipt(receipt, { ...expected, arguments: ARGS_B }),
      'arguments_mismatch',
    );
  });

  it('binds the answer: another choice, extra content or content without a cd is content_mismatch', async () => {
    const answered = { serviceName: 'api-prod', deleteVolumes: false };
    const { receipt } = await signer.sign(inputFor({ cd: digestJson(answered) }));
    await expect(verifyReceipt(receipt, { ...expected, content: answered })).resolves.toBeDefined();
    for (const content of [
      { ...answered, deleteVolumes: true },
      { serviceName: 'api-prod' },
      {},
      undefined,
      { s: '\ud800' },
    ])
      await expectRefused(verifyReceipt(receipt, { ...expected, content }), 'content_mismatch');
    // No cd: the receipt approves the empty answer only.
    const bare = (await signer.sign(inputFor())).receipt;
    await expect(verifyReceipt(bare, { ...expected, content: {} })).resolves.toBeDefined();
    await expectRefused(
      verifyReceipt(bare, { ...expected, content: { deleteVolumes: true } }),
      'content_mismatch',
    );
  });

  it('refuses arguments with one more member, or one value of another type', async () => {
    const { receipt } = await signer.sign(inputFor());
    for (const args of [
      { ...ARGS_A, force: true },
      { ...ARGS_A, serviceId: ['svc_a1'] },
      { serviceId: 'svc_a1' },
    ])
      await expectRefused(
        verifyReceipt(receipt, { ...expected, arguments: args }),
        'arguments_mismatch',
      );
  });

  it('refuses arguments that cannot be canonicalized as arguments_mismatch, not a crash', async () => {
    const { receipt } = await signer.sign(inputFor());
    const cyclic: Record<string, unknown> = { ...ARGS_A };
    cyclic.self = cyclic;
    for (const args of [{ n: Number.NaN }, { s: '\ud800' }, cyclic, undefined])
      await expectRefused(
        verifyReceipt(receipt, { ...expected, arguments: args }),
        'arguments_mismatch',
      );
  });

  it('refuses another operation, even one differing only in the method', async () => {
    const { receipt } = await signer.sign(inputFor());
    for (const operation of [
      'tools/call:delete_volume',
      'prompts/get:delete_service',
      'tools/call:Delete_service',
    ])
      await expectRefused(verifyReceipt(receipt, { ...expected, operation }), 'operation_mismatch');
  });

  it('refuses another principal when the executor names one', async () => {
    const { receipt } = await signer.sign(inputFor());
    await expectRefused(
      verifyReceipt(receipt, { ...expected, principal: 'user_other' }),
      'principal_mismatch',
    );
    await expect(
      verifyReceipt(receipt, { ...expected, principal: 'user_5f2a' }),
    ).resolves.toBeDefined();
  });

  it('refuses a level below minLevel and accepts one at or above it', async () => {
    const form = (await signer.sign(inputFor())).receipt;
    const url = (await signer.sign(inputFor({ lvl: 'url' }))).receipt;
    const passkey = (await signer.sign(inputFor({ lvl: 'passkey', cred: 'AQID' }))).receipt;
    await expectRefused(
      verifyReceipt(form, { ...expected, minLevel: 'url' }),
      'insufficient_level',
    );
    await expectRefused(
      verifyReceipt(url, { ...expected, minLevel: 'passkey' }),
      'insufficient_level',
    );
    await expect(verifyReceipt(url, { ...expected, minLevel: 'url' })).resolves.toBeDefined();
    await expect(verifyReceipt(passkey, { ...expected, minLevel: 'url' })).resolves.toBeDefined();
  });

  it('refuses another issuer when one is expected', async () => {
    const { receipt } = await signer.sign(inputFor());
    await expectRefused(
      verifyReceipt(receipt, { ...expected, issuer: 'https://other.example' }),
      'wrong_issuer',
    );
    await expect(verifyReceipt(receipt, { ...expected, issuer: ISSUER })).resolves.toBeDefined();
  });

  it('refuses an expired receipt, after the clock tolerance and not before', async () => {
    const { receipt, claims } = await signer.sign(inputFor());
    const at = (s: number) => ({ ...expected, now: s * 1000 });
    await expect(verifyReceipt(receipt, at(claims.exp + 29))).resolves.toBeDefined();
    await expectRefused(verifyReceipt(receipt, at(claims.exp + 30)), 'expired');
    await expectRefused(
      verifyReceipt(receipt, { ...at(claims.exp + 1), clockToleranceSeconds: 0 }),
      'expired',
    );
    await expectRefused(verifyReceipt(receipt, at(claims.exp + 86_400)), 'expired');
  });

  it('refuses a receipt issued further ahead than the clock tolerance', async () => {
    const { receipt, claims } = await signer.sign(inputFor());
    await expect(
      verifyReceipt(receipt, { ...expected, now: (claims.iat - 30) * 1000 }),
    ).resolves.toBeDefined();
    await expectRefused(
      verifyReceipt(receipt, { ...expected, now: (claims.iat - 31) * 1000 }),
      'not_yet_valid',
    );
  });

  it('checks authenticity before the action: a forged receipt for the right action is bad_signature', async () => {
    const other = await newKey('r1');
    const forger = await signerWith([other]);
    const { receipt } = await forger.sign(inputFor());
    await expectRefused(verifyReceipt(receipt, expected), 'bad_signature');
  });

  it('refuses options that are not as documented with a TypeError', async () => {
    const { receipt } = await signer.sign(inputFor());
    const bad = [
      { ...expected, operation: '' },
      { ...expected, keys: 'https://x.example/jwks' as never },
      { ...expected, keys: { nope: [] } as never },
      { ...expected, clockToleranceSeconds: 301 },
      { ...expected, clockToleranceSeconds: -1 },
      { ...expected, now: Number.NaN },
      { ...expected, minLevel: 'sms' as never },
      { operation: OPERATION, keys: signer.jwks() } as never,
    ];
    for (const options of bad)
      await expect(verifyReceipt(receipt, options)).rejects.toBeInstanceOf(TypeError);
  });
});

describe('verifyReceiptSignature', () => {
  it('checks authenticity and time but not the action: for display, not for acting', async () => {
    const { receipt, claims } = await signer.sign(inputFor());
    await expect(
      verifyReceiptSignature(receipt, { keys: signer.jwks(), now: NOW }),
    ).resolves.toEqual({
      claims,
      kid: 'r1',
    });
    await expectRefused(
      verifyReceiptSignature(receipt, { keys: signer.jwks(), now: (claims.exp + 60) * 1000 }),
      'expired',
    );
  });
});

describe('actionMismatch', () => {
  it('names the first part of the action a verified receipt does not approve, in verifyReceipt order', async () => {
    const answered = { serviceName: 'api-prod' };
    const { claims } = await signer.sign(inputFor({ cd: digestJson(answered), lvl: 'url' }));
    const action = { operation: OPERATION, arguments: ARGS_A, content: answered };
    expect(actionMismatch(claims, action)).toBeUndefined();
    expect(actionMismatch(claims, { ...action, operation: 'tools/call:other' })).toBe(
      'operation_mismatch',
    );
    expect(actionMismatch(claims, { ...action, arguments: ARGS_B, content: {} })).toBe(
      'arguments_mismatch',
    );
    expect(actionMismatch(claims, { ...action, content: {} })).toBe('content_mismatch');
    expect(actionMismatch(claims, { ...action, principal: 'mallory' })).toBe('principal_mismatch');
    expect(actionMismatch(claims, { ...action, minLevel: 'passkey' })).toBe('insufficient_level');
  });

  it("checks the answer against {} when content is absent, unless asked to check it only 'when-given'", async () => {
    const { claims } = await signer.sign(inputFor({ cd: digestJson({ serviceName: 'api-prod' }) }));
    const action = { operation: OPERATION, arguments: ARGS_A };
    expect(actionMismatch(claims, action)).toBe('content_mismatch');
    expect(actionMismatch(claims, action, { content: 'always' })).toBe('content_mismatch');
    expect(actionMismatch(claims, action, { content: 'when-given' })).toBeUndefined();
    expect(actionMismatch(claims, { ...action, content: {} }, { content: 'when-given' })).toBe(
      'content_mismatch',
    );
  });

  it('throws TypeError for an expectation verifyReceipt would refuse, never approving it', async () => {
    const { claims } = await signer.sign(inputFor());
    const action = { operation: OPERATION, arguments: ARGS_A };
    const bad = [
      { ...action, minLevel: 'PASSKEY' },
      { ...action, operation: '' },
      { operation: OPERATION },
    ] as never[];
    for (const expected of bad) expect(() => actionMismatch(claims, expected)).toThrow(TypeError);
    expect(() => actionMismatch(claims, action, { content: 'sometimes' as never })).toThrow(
      TypeError,
    );
  });
});

describe('receiptIssuer', () => {
  const confirmed = (confirmation: ConfirmedOperation['confirmation']): ConfirmedOperation => ({
    principal: 'alice',
    operation: OPERATION,
    argumentsDigest: digestJson(ARGS_A),
    questionDigest: digestJson(QUESTION),
    confirmation,
    nonce: 'AAAAAAAAAAAAAAAAAAAAAA',
    contentDigest: digestJson({}),
  });

  it('signs a presence approval as lvl passkey with its credential id', async () => {
    const receipt = await receiptIssuer(signer).issue(
      confirmed({ level: 'presence', credentialId: 'AQIDBAUGBwg' }),
    );
    expect(partsOf(receipt).payload).toMatchObject({ lvl: 'passkey', cred: 'AQIDBAUGBwg' });
  });

  it('signs a url approval the person made with a passkey as url, without cred (the level it was asked at)', async () => {
    const receipt = await receiptIssuer(signer).issue(
      confirmed({ level: 'url', credentialId: 'AQIDBAUGBwg' }),
    );
    const payload = partsOf(receipt).payload;
    expect(payload).toMatchObject({ lvl: 'url', qd: digestJson(QUESTION) });
    expect('cred' in payload).toBe(false);
  });

  it('refuses a presence approval without its credential id (a TypeError, nothing signed)', async () => {
    await expect(receiptIssuer(signer).issue(confirmed({ level: 'presence' }))).rejects.toThrow(
      TypeError,
    );
  });
});
