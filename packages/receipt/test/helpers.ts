import { digestJson } from '@mrtr/digest';
import { CompactSign, type CryptoKey, generateKeyPair } from 'jose';
import { expect } from 'vitest';
import {
  ReceiptError,
  type ReceiptErrorCode,
  type ReceiptInput,
  ReceiptSigner,
  type ReceiptSignerOptions,
} from '../src/index.js';

/** A fixed clock: 2026-11-30T12:00:00Z, milliseconds. */
export const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
export const ISSUER = 'https://deleter.example';
export const OPERATION = 'tools/call:delete_service';
/** The arguments approved: delete svc A. */
export const ARGS_A = { serviceId: 'svc_a1', name: 'api-prod' };
/** Another service. */
export const ARGS_B = { serviceId: 'svc_b2', name: 'api-prod' };
export const QUESTION = {
  message: 'Delete service api-prod (svc_a1) with 3 instances? This cannot be undone.',
  requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
};

/** What the gate would attest for a form "yes" to deleting svc A. */
export function inputFor(overrides: Partial<ReceiptInput> = {}): ReceiptInput {
  return {
    sub: 'user_5f2a',
    op: OPERATION,
    ad: digestJson(ARGS_A),
    qd: digestJson(QUESTION),
    lvl: 'form',
    n: 'QkVfV3FzZ2ZfbjBuY2UxMg',
    ...overrides,
  };
}

export interface TestKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/** A fresh Ed25519 pair with jose. */
export async function newKey(kid: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { extractable: true });
  return { kid, privateKey, publicKey };
}

/** A signer on the fixed clock. */
export function signerWith(
  keys: ReceiptSignerOptions['keys'],
  options: Partial<ReceiptSignerOptions> = {},
): Promise<ReceiptSigner> {
  return ReceiptSigner.create({ keys, issuer: ISSUER, now: () => NOW, ...options });
}

const enc = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The three parts of a compact JWS, header and payload decoded. */
export function partsOf(receipt: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  headerB64: string;
  payloadB64: string;
  signature: string;
} {
  const [headerB64 = '', payloadB64 = '', signature = ''] = receipt.split('.');
  return {
    header: JSON.parse(Buffer.from(headerB64, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(payloadB64, 'base64url').toString()),
    headerB64,
    payloadB64,
    signature,
  };
}

/** Header and payload re-encoded, the original signature kept: a tampered receipt. */
export function tamper(
  receipt: string,
  edit: { header?: Record<string, unknown>; payload?: Record<string, unknown> },
): string {
  const p = partsOf(receipt);
  const header = edit.header ? enc(edit.header) : p.headerB64;
  const payload = edit.payload ? enc(edit.payload) : p.payloadB64;
  return `${header}.${payload}.${p.signature}`;
}

/** Sign any header and payload with any Ed25519 private key (an attacker's, or ours misused). */
export async function signRaw(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  privateKey: CryptoKey,
): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader(header as { alg: string })
    .sign(privateKey);
}

/** Await `promise` and expect a ReceiptError with `code`. */
export async function expectRefused(
  promise: Promise<unknown>,
  code: ReceiptErrorCode,
): Promise<ReceiptError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected refusal ${code}`).toBeInstanceOf(ReceiptError);
  expect((error as ReceiptError).code).toBe(code);
  return error as ReceiptError;
}
