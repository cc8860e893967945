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
 * What a terminal or a page might act on, or that draws nothing: C0 and C1
 * controls, DEL, line and paragraph separators, every format character
 * (bidirectional marks, overrides and isolates, the Arabic letter mark,
 * zero-width characters, the BOM, tag characters), other default-ignorable
 * code points, the blank braille pattern, private-use and unassigned code points. Claim values are
 * shown with these escaped, so a crafted `sub` cannot rewrite the lines
 * around it or hide what tells two values apart.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800]/u;

/** A claim value as shown: JSON-quoted, with anything {@link UNSAFE} escaped as `\uXXXX` (a pair for one past U+FFFF). */
function quote(value: string): string {
  let out = '';
  for (const c of JSON.stringify(value)) {
    if (!UNSAFE.test(c)) out += c;
    else
      for (let i = 0; i < c.length; i++)
        out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
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
