import { decodeJwt, decodeProtectedHeader } from 'jose';
import { isCompactShape, type ReceiptClaims, receiptClaimsOf } from './claims.js';
import { ReceiptError } from './errors.js';
import { EMPTY_CONTENT } from './expected.js';

/** What {@link describeReceipt} decodes and says; nothing of it is verified. */
export interface ReceiptDescription {
  /** The protected header as decoded. */
  header: { alg: string; kid: string; typ: string };
  /** The claims as decoded. */
  claims: ReceiptClaims;
  /** What the receipt proves once its signature verifies under the issuer's key, one sentence each. */
  proves: string[];
  /** What it never proves, one sentence each. */
  doesNotProve: string[];
}

/**
 * Whether a terminal or a page might act on `code`: C0 and C1 controls, DEL,
 * bidirectional marks, overrides and isolates. Claim values are shown with
 * these escaped, so a crafted `sub` cannot rewrite the lines around it.
 */
function unsafe(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** A claim value as shown: JSON-quoted, with anything {@link unsafe} escaped as `\uXXXX`. */
function quote(value: string): string {
  let out = '';
  for (const c of JSON.stringify(value)) {
    const code = c.charCodeAt(0);
    out += unsafe(code) ? `\\u${code.toString(16).padStart(4, '0')}` : c;
  }
  return out;
}

function time(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

const HOW: Record<ReceiptClaims['lvl'], (claims: ReceiptClaims) => string> = {
  form: () =>
    'by an answer to an elicitation form, sent by a client bound to that principal (level form)',
  url: () =>
    "on the issuer's own page, by a person signed in as that principal (level url, URL-mode elicitation)",
  passkey: (c) =>
    `with a WebAuthn assertion over this action, user present and verified, by the principal's passkey credential ${quote(c.cred ?? '')} (level passkey)`,
};

/**
 * Decode a receipt WITHOUT verifying it, to show what it claims and what it
 * would prove (for `mrtr receipt verify`, after `verifyReceiptSignature`).
 * Never use it to decide anything: anyone can write a receipt that decodes.
 * Claim values in the sentences are JSON-quoted, with control and
 * bidirectional characters escaped.
 *
 * @param receipt a compact JWS.
 * @returns the decoded header and claims, and sentences for a person.
 * @throws {ReceiptError} `malformed` when it is not a compact JWS whose
 *   header has string `alg`, `kid` and `typ` and whose payload holds the
 *   claims of a receipt.
 */
export function describeReceipt(receipt: string): ReceiptDescription {
  let header: Record<string, unknown>;
  let payload: Record<string, unknown>;
  try {
    if (!isCompactShape(receipt)) throw new Error('not a compact JWS');
    header = decodeProtectedHeader(receipt) as Record<string, unknown>;
    payload = decodeJwt(receipt);
  } catch {
    throw new ReceiptError('malformed');
  }
  const { alg, kid, typ } = header;
  if (typeof alg !== 'string' || typeof kid !== 'string' || typeof typ !== 'string')
    throw new ReceiptError('malformed');
  const claims = receiptClaimsOf(payload);
  const proves = [
    `${quote(claims.iss)} attests that principal ${quote(claims.sub)} approved ${quote(claims.op)}`,
    `for exactly the arguments whose RFC 8785 digest is ${claims.ad}`,
    `after being shown the question whose digest is ${claims.qd}`,
    HOW[claims.lvl](claims),
    `with the answer whose RFC 8785 digest is ${claims.cd ?? `${EMPTY_CONTENT} (the empty answer {})`}`,
    `for the confirmation with ticket nonce ${quote(claims.n)} (receipt id ${quote(claims.jti)})`,
    `issued ${time(claims.iat)}, valid until ${time(claims.exp)}`,
  ];
  const doesNotProve = [
    ...(claims.lvl === 'form'
      ? ['that a person, rather than the client or its model, answered']
      : []),
    ...(claims.lvl === 'url'
      ? [
          "that the person signed in was not someone else holding the principal's page sign-in (a client that can sign in to the page can approve)",
        ]
      : []),
    ...(claims.lvl === 'passkey'
      ? [
          "that the passkey is the principal's own, if whoever holds the page's sign-in could register one; nor that the authenticator was not cloned or coerced (there is no attestation)",
        ]
      : []),
    'that the action was not already performed: single use is kept by the executor’s replay store',
    'that the target is unchanged since the approval: re-read it before acting',
    'anything, until its signature is verified with the issuer’s published keys',
  ];
  return { header: { alg, kid, typ }, claims, proves, doesNotProve };
}
