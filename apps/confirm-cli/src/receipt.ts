/**
 * `mrtr receipt verify <receipt> --jwks <url>`: check a signed approval
 * receipt (`@mrtr/receipt`) against the issuer's published keys and say, in
 * plain lines, what it proves and what it does not.
 */
import {
  describeReceipt,
  ReceiptError,
  type ReceiptErrorCode,
  verifyReceiptSignature,
} from '@mrtr/receipt';
import { UsageError } from './args.js';
import { oneLine } from './display.js';

/** Options of {@link verifyReceiptCommand}. */
export interface ReceiptVerifyOptions {
  /** The issuer's JWKS URL, http(s), e.g. `https://deleter.example/.well-known/jwks.json`. */
  jwks: string;
  /** The `iss` the receipt must carry (default: any issuer whose key is in the set). */
  issuer?: string;
  /** Verify as of this time (ISO 8601), e.g. the `recorded_at` of its audit row; default now. */
  at?: string;
}

/** What the command printed and its exit code: 0 verified, 1 refused, 2 keys unavailable. */
export interface ReceiptVerdict {
  exitCode: 0 | 1 | 2;
  lines: string[];
}

/** Why a receipt was refused, for a person: what it means and what to check. */
const WHY: Partial<Record<ReceiptErrorCode, (jwks: string) => string>> = {
  malformed: () =>
    'it is not a well-formed approval receipt (a compact JWS with the claims of one)',
  unsupported_algorithm: () =>
    'its algorithm is not EdDSA; receipts are only ever signed with EdDSA',
  wrong_type: () => 'its typ header is not mrtr-receipt+jwt: it is another kind of token',
  unknown_key: (jwks) =>
    `its key id is not in the key set at ${jwks}: signed by another issuer, or with a key since rotated out`,
  bad_signature: (jwks) =>
    `its signature does not verify under the key of that id at ${jwks}: it was altered after signing, or signed with another key`,
  wrong_issuer: () => 'it was issued by another issuer than --issuer',
  expired: () =>
    'it has expired (verify as of an earlier time with --at, e.g. its audit record time)',
  not_yet_valid: () => 'it was issued in the future (check the clocks, or --at)',
};

function parseOptions(options: ReceiptVerifyOptions): { url: URL; now?: number } {
  const url = URL.canParse(options.jwks) ? new URL(options.jwks) : undefined;
  if (!url || !/^https?:$/.test(url.protocol))
    throw new UsageError(`--jwks must be an http(s) URL of a JWKS, got "${oneLine(options.jwks)}"`);
  if (options.at === undefined) return { url };
  const now = Date.parse(options.at);
  if (Number.isNaN(now))
    throw new UsageError(
      `--at must be a time such as 2026-11-30T12:00:00Z, got "${oneLine(options.at)}"`,
    );
  return { url, now };
}

const time = (seconds: number) => new Date(seconds * 1000).toISOString();
const quoted = (value: string) => oneLine(JSON.stringify(value));

/**
 * Verify `receipt` with the keys fetched from `options.jwks` (jose's remote
 * JWKS, 5 s timeout): shape, `alg` EdDSA, `typ`, `kid` in the set, the
 * Ed25519 signature, the claims, `iss` when `--issuer` is given, and the time.
 * It does NOT check what the receipt approves against an action, nor single
 * use: that is the executor's job, and the lines say so.
 * @returns the lines to print and the exit code; never throws for a bad receipt.
 * @throws {UsageError} for a `--jwks` that is not an http(s) URL or an `--at` that is not a time.
 */
export async function verifyReceiptCommand(
  receipt: string,
  options: ReceiptVerifyOptions,
): Promise<ReceiptVerdict> {
  const { url, now } = parseOptions(options);
  const jwks = url.href;
  let kid: string;
  try {
    ({ kid } = await verifyReceiptSignature(receipt.trim(), {
      keys: url,
      ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
      ...(now !== undefined ? { now } : {}),
    }));
  } catch (error) {
    if (!(error instanceof ReceiptError)) throw error;
    if (error.code === 'keys_unavailable') {
      const cause = error.cause instanceof Error ? `: ${oneLine(error.cause.message)}` : '';
      return {
        exitCode: 2,
        lines: [`Could not load the keys from ${jwks}${cause}. Nothing was verified.`],
      };
    }
    const why = WHY[error.code]?.(jwks) ?? error.message;
    return {
      exitCode: 1,
      lines: [`Receipt NOT verified (${error.code}): ${why}.`, 'It proves nothing.'],
    };
  }
  const { claims, proves, doesNotProve } = describeReceipt(receipt.trim());
  const how =
    claims.lvl === 'passkey'
      ? `passkey (WebAuthn, user verified), credential ${quoted(claims.cred ?? '')}`
      : claims.lvl === 'url'
        ? "url (on the issuer's approval page, signed in)"
        : 'form (an elicitation form answered by the client)';
  return {
    exitCode: 0,
    lines: [
      `Receipt verified: signed by key ${quoted(kid)} of ${jwks}, issuer ${quoted(claims.iss)}.`,
      '',
      `  principal        ${quoted(claims.sub)}`,
      `  operation        ${quoted(claims.op)}`,
      `  argument digest  ${claims.ad}`,
      `  question digest  ${claims.qd}`,
      `  confirmed by     ${how}`,
      `  ticket nonce     ${quoted(claims.n)}`,
      `  receipt id       ${quoted(claims.jti)}`,
      `  issued at        ${time(claims.iat)}`,
      `  expires at       ${time(claims.exp)}`,
      '',
      'It proves:',
      ...proves.map((line) => `  - ${oneLine(line)}`),
      'It does not prove:',
      ...doesNotProve
        .filter((line) => !line.startsWith('anything, until'))
        .map((line) => `  - ${oneLine(line)}`),
      '  - that these arguments are the ones you have in mind: compare their digest (digestJson of @mrtr/digest) with the argument digest',
    ],
  };
}
