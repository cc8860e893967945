import { digestJson } from '@mrtr/digest';
import { describe, expect, it } from 'vitest';
import { describeReceipt, RECEIPT_TYPE, ReceiptError } from '../src/index.js';
import { ISSUER, inputFor, newKey, partsOf, signerWith, signRaw } from './helpers.js';

const key = await newKey('r1');
const signer = await signerWith([key]);

describe('describeReceipt', () => {
  it('decodes a passkey receipt and says what it proves, with the credential and the times', async () => {
    const { receipt, claims } = await signer.sign(inputFor({ lvl: 'passkey', cred: 'Y3JlZC0x' }));
    const d = describeReceipt(receipt);
    expect(d.header).toEqual({ alg: 'EdDSA', kid: 'r1', typ: RECEIPT_TYPE });
    expect(d.claims).toEqual(claims);
    expect(d.proves).toEqual([
      `"${ISSUER}" attests that principal "user_5f2a" approved "tools/call:delete_service"`,
      `for exactly the arguments whose RFC 8785 digest is ${claims.ad}`,
      `after being shown the question whose digest is ${claims.qd}`,
      `with a WebAuthn assertion over this action, user present and verified, by the principal's passkey credential "Y3JlZC0x" (level passkey)`,
      `with the answer whose RFC 8785 digest is ${digestJson({})} (the empty answer {})`,
      `for the confirmation with ticket nonce "${claims.n}" (receipt id "${claims.jti}")`,
      'issued 2026-11-30T12:00:00.000Z, valid until 2026-11-30T12:05:00.000Z',
    ]);
    expect(d.doesNotProve.join('\n')).toMatch(
      /replay store[\s\S]*unchanged[\s\S]*signature is verified/,
    );
  });

  it('says that a form answer does not prove a person answered; a URL approval does not say so', async () => {
    const form = describeReceipt((await signer.sign(inputFor())).receipt);
    const url = describeReceipt((await signer.sign(inputFor({ lvl: 'url' }))).receipt);
    expect(form.proves[3]).toMatch(/elicitation form.*level form/);
    expect(form.doesNotProve[0]).toMatch(/that a person, rather than the client/);
    expect(url.proves[3]).toMatch(/own page.*level url/);
    expect(url.doesNotProve.join()).not.toMatch(/that a person/);
  });

  it("names each level's own limit: a URL approval's sign-in, a passkey's authenticator", async () => {
    const url = describeReceipt((await signer.sign(inputFor({ lvl: 'url' }))).receipt);
    const passkey = describeReceipt(
      (await signer.sign(inputFor({ lvl: 'passkey', cred: 'Y3JlZC0x' }))).receipt,
    );
    const form = describeReceipt((await signer.sign(inputFor())).receipt);
    expect(url.doesNotProve[0]).toMatch(/someone else holding the principal's page sign-in/);
    expect(passkey.doesNotProve[0]).toMatch(
      /passkey is the principal's own, if whoever holds the page's sign-in could register one; nor that the authenticator was not cloned or coerced/,
    );
    expect(form.doesNotProve.join()).not.toMatch(/sign-in|authenticator/);
  });

  it('names the digest of the answer a receipt binds', async () => {
    const cd = digestJson({ deleteVolumes: true });
    const d = describeReceipt((await signer.sign(inputFor({ cd }))).receipt);
    expect(d.claims.cd).toBe(cd);
    expect(d.proves).toContain(`with the answer whose RFC 8785 digest is ${cd}`);
  });

  it('does not verify: a receipt signed by anyone decodes (the caller verifies first)', async () => {
    const stranger = await signerWith([await newKey('r1')]);
    expect(describeReceipt((await stranger.sign(inputFor())).receipt).header.kid).toBe('r1');
  });

  it('escapes control and bidirectional characters of claim values', async () => {
    const { receipt } = await signer.sign(inputFor());
    const { header, payload } = partsOf(receipt);
    const crafted = await signRaw(
      header,
      { ...payload, sub: 'eve\u001b[2K\u202eadmin\u009b' },
      key.privateKey,
    );
    const line = describeReceipt(crafted).proves[0] as string;
    expect(line).toContain('"eve\\u001b[2K\\u202eadmin\\u009b"');
    for (const c of ['\u001b', '\u202e', '\u009b']) expect(line).not.toContain(c);
  });

  it('escapes every format, separator, private-use and unassigned character too', async () => {
    const { receipt } = await signer.sign(inputFor());
    const { header, payload } = partsOf(receipt);
    // The Arabic letter mark (bidi), a line separator, a zero-width space, the BOM, a soft hyphen,
    // a tag character, a private-use and an unassigned code point.
    const hidden = [
      '\u061c',
      '\u2028',
      '\u200b',
      '\ufeff',
      '\u00ad',
      '\u{e0041}',
      '\ue000',
      '\u0378',
      '\u2800',
    ];
    const crafted = await signRaw(
      header,
      { ...payload, sub: `adm${hidden.join('')}in` },
      key.privateKey,
    );
    const line = describeReceipt(crafted).proves[0] as string;
    expect(line).toContain(
      '"adm\\u061c\\u2028\\u200b\\ufeff\\u00ad\\udb40\\udc41\\ue000\\u0378\\u2800in"',
    );
    for (const c of hidden) expect(line).not.toContain(c);
  });

  it('refuses times past what a Date holds as malformed, instead of throwing RangeError', async () => {
    const { receipt } = await signer.sign(inputFor());
    const { header, payload } = partsOf(receipt);
    const far = await signRaw(header, { ...payload, iat: 9e12, exp: 9e12 + 60 }, key.privateKey);
    expect(() => describeReceipt(far)).toThrow(ReceiptError);
    expect(() => describeReceipt(far)).toThrow(/malformed/);
  });

  it('refuses what is not a receipt with malformed', async () => {
    const { receipt } = await signer.sign(inputFor());
    const { header, payload } = partsOf(receipt);
    for (const bad of [
      'x',
      `${receipt}.x`,
      await signRaw(header, { ...payload, lvl: 'sms' }, key.privateKey),
      await signRaw({ alg: 'EdDSA', typ: RECEIPT_TYPE }, payload, key.privateKey),
    ]) {
      let error: unknown;
      try {
        describeReceipt(bad);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ReceiptError);
      expect((error as ReceiptError).code).toBe('malformed');
    }
  });
});
