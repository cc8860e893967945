import { inspect } from 'node:util';
import { CompactSign } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  describeReceipt,
  MAX_RECEIPT_LENGTH,
  RECEIPT_TYPE,
  ReceiptError,
  verifyReceipt,
  verifyReceiptSignature,
} from '../src/index.js';
import {
  ARGS_A,
  expectRefused,
  inputFor,
  NOW,
  newKey,
  OPERATION,
  partsOf,
  signerWith,
  signRaw,
} from './helpers.js';

const key = await newKey('r1');
const signer = await signerWith([key]);
const expected = { operation: OPERATION, arguments: ARGS_A, keys: signer.jwks(), now: NOW };
const { receipt } = await signer.sign(inputFor());
const { header, payload, headerB64, payloadB64, signature } = partsOf(receipt);
const b64 = (text: string) => Buffer.from(text).toString('base64url');

/** Sign raw payload bytes with our own key: authentic, but not a receipt's claims. */
const signBytes = (bytes: Uint8Array) =>
  new CompactSign(bytes)
    .setProtectedHeader({ alg: 'EdDSA', kid: 'r1', typ: RECEIPT_TYPE })
    .sign(key.privateKey);

/** `segment` with the unused low bits of its last base64url character set: other text, same bytes. */
function otherSpelling(segment: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(segment.at(-1) as string);
  const spelled = `${segment.slice(0, -1)}${alphabet[last | 0b11]}`;
  if (
    Buffer.from(spelled, 'base64url').equals(Buffer.from(segment, 'base64url')) &&
    spelled !== segment
  )
    return spelled;
  throw new Error('the segment has no second spelling');
}

describe('input that is not a receipt is refused cleanly', () => {
  const garbage: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['an object', { receipt }],
    ['bytes', new TextEncoder().encode(receipt)],
    ['empty', ''],
    ['dots', '..'],
    ['two parts', `${headerB64}.${payloadB64}`],
    ['four parts', `${receipt}.${signature}`],
    ['padding', `${receipt}=`],
    ['whitespace', ` ${receipt}`],
    ['a newline', `${receipt}\n`],
    ['a NUL', `${headerB64}.${payloadB64}\u0000.${signature}`],
    ['a lone surrogate', `${headerB64}.${payloadB64}.${signature}\ud800`],
    ['header not JSON', `${b64('{alg')}.${payloadB64}.${signature}`],
    ['header a JSON array', `${b64('["EdDSA"]')}.${payloadB64}.${signature}`],
    ['header JSON null', `${b64('null')}.${payloadB64}.${signature}`],
    [
      'header invalid UTF-8',
      `${Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')}.${payloadB64}.${signature}`,
    ],
    ['too long', `${headerB64}.${'A'.repeat(MAX_RECEIPT_LENGTH)}.${signature}`],
    // An Ed25519 signature is 86 characters whose last carries 4 unused bits: set, it decodes the same.
    [
      'a second spelling of the signature',
      `${headerB64}.${payloadB64}.${otherSpelling(signature)}`,
    ],
  ];

  it.each(garbage)('%s: malformed', async (_label, value) => {
    await expectRefused(verifyReceipt(value as string, expected), 'malformed');
    await expectRefused(verifyReceiptSignature(value as string, expected), 'malformed');
    expect(() => describeReceipt(value as string)).toThrow(ReceiptError);
  });

  it('authentic payloads that are not receipt claims: malformed', async () => {
    const payloads = [
      new TextEncoder().encode('not json'),
      new TextEncoder().encode('[1,2,3]'),
      new TextEncoder().encode('"a string"'),
      Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), // invalid UTF-8
      new TextEncoder().encode(
        JSON.stringify({ ...payload, sub: 'x' }).replace('"sub":"x"', '"sub":"\\ud800"'),
      ),
      new TextEncoder().encode('{}'),
    ];
    for (const bytes of payloads)
      await expectRefused(verifyReceipt(await signBytes(bytes), expected), 'malformed');
  });

  it('deeply nested or huge claim values from our own key: malformed, no crash', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 500; i++) deep = [deep];
    await expectRefused(
      verifyReceipt(await signRaw(header, { ...payload, sub: deep }, key.privateKey), expected),
      'malformed',
    );
    await expectRefused(
      verifyReceipt(
        await signRaw(header, { ...payload, op: 'x'.repeat(600) }, key.privateKey),
        expected,
      ),
      'malformed',
    );
  });

  it('random single-character edits of a valid receipt are refused, or are the same receipt', async () => {
    const alphabet = 'AZaz09-_.=+/ ';
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 300; i++) {
      const at = rand(receipt.length);
      const c = alphabet[rand(alphabet.length)] as string;
      const op = rand(3);
      const edited =
        op === 0
          ? receipt.slice(0, at) + c + receipt.slice(at + 1)
          : op === 1
            ? receipt.slice(0, at) + c + receipt.slice(at)
            : receipt.slice(0, at) + receipt.slice(at + 1);
      if (edited === receipt) continue;
      const outcome = await verifyReceipt(edited, expected).then(
        (v) => v,
        (e: unknown) => e,
      );
      if (outcome instanceof ReceiptError) continue;
      // Base64url leaves unused low bits in the last character: another spelling of the same bytes.
      expect(outcome).toMatchObject({ claims: payload });
      expect(at).toBeGreaterThanOrEqual(receipt.length - 2);
    }
  });
});

describe('a refusal never echoes the receipt', () => {
  const MARK = 'MARK-5ecret-principal-name';
  const marked = { ...payload, sub: MARK, op: `tools/call:${MARK}` };

  it('in its message, its stack, its properties or its cause, for every refusal path', async () => {
    const now = NOW / 1000;
    const cases: [() => Promise<unknown>, string][] = [
      [
        async () =>
          verifyReceipt(await signRaw(header, marked, (await newKey('x')).privateKey), expected),
        'bad_signature',
      ],
      [
        async () =>
          verifyReceipt(await signRaw(header, { ...marked, iss: MARK }, key.privateKey), {
            ...expected,
            issuer: 'https://a.example',
          }),
        'wrong_issuer',
      ],
      [
        async () =>
          verifyReceipt(
            await signRaw(header, { ...marked, iat: now - 900, exp: now - 600 }, key.privateKey),
            expected,
          ),
        'expired',
      ],
      [
        async () =>
          verifyReceipt(await signRaw({ ...header, typ: 'JWT' }, marked, key.privateKey), expected),
        'wrong_type',
      ],
      [
        async () =>
          verifyReceipt(await signRaw(header, { ...marked, exp: MARK }, key.privateKey), expected),
        'malformed',
      ],
      [
        async () => verifyReceipt(await signRaw(header, marked, key.privateKey), expected),
        'operation_mismatch',
      ],
      [async () => verifyReceipt(tamper(marked), expected), 'bad_signature'],
      [
        async () =>
          verifyReceipt(
            `${b64(JSON.stringify({ ...header, kid: MARK }))}.${payloadB64}.${signature}`,
            expected,
          ),
        'unknown_key',
      ],
    ];
    for (const [promise, code] of cases) {
      const error = await expectRefused(promise(), code as never);
      expect(error.cause).toBeUndefined();
      const shown = `${error.message}\n${error.stack}\n${inspect(error, { depth: 20, showHidden: true })}\n${JSON.stringify(error)}`;
      expect(shown).not.toContain('MARK');
      expect(shown).not.toContain(payloadB64.slice(0, 20));
    }
  });

  function tamper(p: Record<string, unknown>): string {
    return `${headerB64}.${b64(JSON.stringify(p))}.${signature}`;
  }
});
