import { digestJson } from '@mrtr/digest';
import { describe, expect, it } from 'vitest';
import { RECEIPT_TYPE, verifyReceipt } from '../src/index.js';
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
  signerWith,
  signRaw,
  tamper,
} from './helpers.js';

const key = await newKey('r1');
const second = await newKey('r2');
// Both keys are ours and published: r2 is a second trusted key of the same issuer.
const signer = await signerWith([key, second]);
const expected = { operation: OPERATION, arguments: ARGS_A, keys: signer.jwks(), now: NOW };
const { receipt, claims } = await signer.sign(
  inputFor({ lvl: 'passkey', cred: 'Y3JlZGVudGlhbC1pZA' }),
);
const { header, payload } = partsOf(receipt);

/** For each claim: a changed value of the same type, as an attacker would try. */
const CHANGED: Record<string, unknown> = {
  iss: 'https://evil.example',
  sub: 'user_other',
  iat: claims.iat - 1,
  exp: claims.exp + 3600,
  jti: 'AAAAAAAAAAAAAAAAAAAAAA',
  op: 'tools/call:delete_volume',
  ad: digestJson(ARGS_B),
  qd: digestJson({ message: 'Delete nothing important?' }),
  lvl: 'url',
  cred: 'b3RoZXItY3JlZGVudGlhbA',
  n: 'another-ticket-nonce',
};

describe('a receipt changed after signing', () => {
  it('covers every claim the signer writes', () => {
    expect(Object.keys(CHANGED).sort()).toEqual(Object.keys(payload).sort());
  });

  it.each(Object.keys(CHANGED))('payload claim %s changed: bad_signature', async (name) => {
    const forged = tamper(receipt, { payload: { ...payload, [name]: CHANGED[name] } });
    await expectRefused(verifyReceipt(forged, expected), 'bad_signature');
  });

  it.each(Object.keys(CHANGED))('payload claim %s removed: bad_signature', async (name) => {
    const { [name]: _gone, ...rest } = payload;
    await expectRefused(
      verifyReceipt(tamper(receipt, { payload: rest }), expected),
      'bad_signature',
    );
  });

  it('payload with one claim added, or re-encoded with other key order: bad_signature', async () => {
    await expectRefused(
      verifyReceipt(tamper(receipt, { payload: { ...payload, admin: true } }), expected),
      'bad_signature',
    );
    const reordered = Object.fromEntries(Object.entries(payload).reverse());
    await expectRefused(
      verifyReceipt(tamper(receipt, { payload: reordered }), expected),
      'bad_signature',
    );
  });

  it('header kid switched to our other key: bad_signature', async () => {
    const forged = tamper(receipt, { header: { ...header, kid: 'r2' } });
    await expectRefused(verifyReceipt(forged, expected), 'bad_signature');
  });

  it('header with a member added or re-encoded: bad_signature', async () => {
    await expectRefused(
      verifyReceipt(
        tamper(receipt, { header: { ...header, jku: 'https://evil.example/jwks' } }),
        expected,
      ),
      'bad_signature',
    );
    await expectRefused(
      verifyReceipt(
        tamper(receipt, { header: { typ: header.typ, kid: header.kid, alg: header.alg } }),
        expected,
      ),
      'bad_signature',
    );
  });

  it('header kid unknown: unknown_key; typ changed: wrong_type; alg changed: unsupported_algorithm', async () => {
    await expectRefused(
      verifyReceipt(tamper(receipt, { header: { ...header, kid: 'r9' } }), expected),
      'unknown_key',
    );
    for (const typ of ['JWT', 'at+jwt', 'application/mrtr-receipt+jwt', 'MRTR-RECEIPT+JWT'])
      await expectRefused(
        verifyReceipt(tamper(receipt, { header: { ...header, typ } }), expected),
        'wrong_type',
      );
    const { typ: _t, ...untyped } = header;
    await expectRefused(
      verifyReceipt(tamper(receipt, { header: untyped }), expected),
      'wrong_type',
    );
    for (const alg of ['Ed25519', 'ES256', 'HS256', 'none'])
      await expectRefused(
        verifyReceipt(tamper(receipt, { header: { ...header, alg } }), expected),
        'unsupported_algorithm',
      );
  });

  it('header without kid or with crit: malformed', async () => {
    const { kid: _k, ...noKid } = header;
    await expectRefused(verifyReceipt(tamper(receipt, { header: noKid }), expected), 'malformed');
    await expectRefused(
      verifyReceipt(tamper(receipt, { header: { ...header, crit: ['exp'], exp: 1 } }), expected),
      'malformed',
    );
  });

  it('any single signature character changed: bad_signature or malformed, never accepted', async () => {
    const p = partsOf(receipt);
    const alphabet = 'AQgw_-';
    for (let i = 0; i < p.signature.length; i += 7) {
      const c = p.signature[i] as string;
      const swap = alphabet[(alphabet.indexOf(c) + 1) % alphabet.length] ?? 'A';
      const signature =
        p.signature.slice(0, i) + (c === swap ? 'B' : swap) + p.signature.slice(i + 1);
      const error = await verifyReceipt(
        `${p.headerB64}.${p.payloadB64}.${signature}`,
        expected,
      ).catch((e: { code?: string }) => e);
      expect(['bad_signature', 'malformed']).toContain((error as { code?: string }).code);
    }
    await expectRefused(verifyReceipt(`${p.headerB64}.${p.payloadB64}.`, expected), 'malformed');
    await expectRefused(verifyReceipt(`${p.headerB64}.${p.payloadB64}`, expected), 'malformed');
  });
});

describe('a receipt re-signed with another key', () => {
  it('by a foreign key under our kid: bad_signature', async () => {
    const foreign = await newKey('r1');
    const forged = await signRaw(
      header,
      { ...payload, ad: digestJson(ARGS_B) },
      foreign.privateKey,
    );
    await expectRefused(verifyReceipt(forged, { ...expected, arguments: ARGS_B }), 'bad_signature');
  });

  it('by a foreign key under its own kid: unknown_key', async () => {
    const foreign = await newKey('evil');
    const forged = await signRaw({ ...header, kid: 'evil' }, payload, foreign.privateKey);
    await expectRefused(verifyReceipt(forged, expected), 'unknown_key');
  });

  it('a foreign signer with its own JWKS: verifies only against its own keys', async () => {
    const foreignSigner = await signerWith([await newKey('r1')]);
    const forged = (await foreignSigner.sign(inputFor())).receipt;
    await expectRefused(verifyReceipt(forged, expected), 'bad_signature');
    await expect(
      verifyReceipt(forged, { ...expected, keys: foreignSigner.jwks() }),
    ).resolves.toBeDefined();
  });
});

describe('a receipt our key signed with one claim changed (what each check is for)', () => {
  const resign = (changes: Record<string, unknown>, drop: string[] = []) => {
    const next: Record<string, unknown> = { ...payload, ...changes };
    for (const name of drop) delete next[name];
    return signRaw(header, next, key.privateKey);
  };

  it.each([
    ['op', { op: 'tools/call:delete_volume' }, 'operation_mismatch'],
    ['ad', { ad: digestJson(ARGS_B) }, 'arguments_mismatch'],
    ['iss', { iss: 'https://evil.example' }, 'wrong_issuer'],
    ['exp', { iat: NOW / 1000 - 400, exp: NOW / 1000 - 100 }, 'expired'],
    ['iat', { iat: NOW / 1000 + 120, exp: NOW / 1000 + 400 }, 'not_yet_valid'],
    ['sub', { sub: 'user_other' }, 'principal_mismatch'],
    ['lvl', { lvl: 'form', cred: undefined }, 'insufficient_level'],
  ] as const)('%s: %s', async (_name, changes, code) => {
    await expectRefused(
      verifyReceipt(await resign(changes), {
        ...expected,
        issuer: ISSUER,
        principal: 'user_5f2a',
        minLevel: 'passkey',
      }),
      code,
    );
  });

  it.each([
    ['lvl unknown', { lvl: 'sms' }],
    ['passkey without cred', {}, ['cred']],
    ['form with cred', { lvl: 'form' }],
    ['ad not a digest', { ad: 'svc_a1' }],
    ['exp before iat', { exp: claims.iat - 1 }],
    ['exp a string', { exp: String(claims.exp) }],
    ['lifetime over a day', { exp: claims.iat + 86_401 }],
    ['iat fractional', { iat: claims.iat + 0.5 }],
    ['jti missing', {}, ['jti']],
    ['n missing', {}, ['n']],
    ['n empty', { n: '' }],
    ['sub not a string', { sub: ['user_5f2a'] }],
  ] as [
    string,
    Record<string, unknown>,
    string[]?,
  ][])('claims that are not a receipt (%s): malformed', async (_label, changes, drop = []) => {
    await expectRefused(verifyReceipt(await resign(changes, [...drop]), expected), 'malformed');
  });

  it('a JWT of another type signed by our key (typ JWT): wrong_type', async () => {
    const other = await signRaw({ ...header, typ: 'JWT' }, payload, key.privateKey);
    await expectRefused(verifyReceipt(other, expected), 'wrong_type');
    expect(header.typ).toBe(RECEIPT_TYPE);
  });
});
