/**
 * `mrtr receipt verify <receipt> --jwks <url-or-file>`: check a signed
 * approval receipt (`@mrtr/receipt`) against the issuer's published keys (or
 * a copy of them archived in a file) and say, in plain lines, what it proves
 * and what it does not.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  describeReceipt,
  ReceiptError,
  type ReceiptErrorCode,
  type ReceiptKeySource,
  verifyReceiptSignature,
} from '@mrtr/receipt';
import { UsageError } from './args.js';
import { oneLine } from './display.js';

/** Options of {@link verifyReceiptCommand}. */
export interface ReceiptVerifyOptions {
  /**
   * The issuer's JWKS: an http(s) URL, e.g.
   * `https://deleter.example/.well-known/jwks.json`, fetched; or a file holding
   * the JWKS JSON document (a path, or a `file://` URL), e.g. archived for
   * verifying an old receipt.
   */
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
  not_yet_valid: () => 'it was issued in the future (check the clocks, or --at)',
};

/** Where the keys are: a JWKS URL to fetch, or a file holding a JWKS. */
type JwksSource = { url: URL; file?: never } | { file: string; url?: never };

/** `scheme://…`: given as a URL, so it must be one we read (a bare path never starts so). */
const URL_LIKE = /^[a-z][a-z\d+.-]*:\/\//i;

function jwksSource(jwks: string): JwksSource {
  const wrong = () =>
    new UsageError(
      `--jwks must be an http(s) URL of a JWKS, or a file holding one (a path or a file:// URL), got "${oneLine(jwks)}"`,
    );
  if (jwks === '') throw wrong();
  if (!URL_LIKE.test(jwks)) return { file: resolve(jwks) };
  const url = URL.canParse(jwks) ? new URL(jwks) : undefined;
  if (url && /^https?:$/.test(url.protocol)) return { url };
  if (url?.protocol !== 'file:') throw wrong();
  try {
    return { file: fileURLToPath(url) };
  } catch {
    throw wrong(); // file://host/… names another machine
  }
}

function parseOptions(options: ReceiptVerifyOptions): { source: JwksSource; now?: number } {
  const source = jwksSource(options.jwks);
  if (options.at === undefined) return { source };
  const now = Date.parse(options.at);
  if (Number.isNaN(now))
    throw new UsageError(
      `--at must be a time such as 2026-11-30T12:00:00Z, got "${oneLine(options.at)}"`,
    );
  return { source, now };
}

/** The JWKS in `file`, or why it cannot be used (never quoting the file: it may not be a JWKS at all). */
async function readJwks(file: string): Promise<{ keys: ReceiptKeySource } | { why: string }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return {
      why:
        code === 'ENOENT'
          ? 'no such file'
          : code === 'EISDIR'
            ? 'it is a directory'
            : oneLine(error instanceof Error ? error.message : String(error)),
    };
  }
  let jwks: unknown;
  try {
    jwks = JSON.parse(text);
  } catch {
    return { why: 'the file is not JSON' };
  }
  const keys = (jwks as { keys?: unknown } | null)?.keys;
  if (typeof jwks !== 'object' || Array.isArray(jwks) || !Array.isArray(keys))
    return { why: 'the file is not a JWKS (a JSON object with a "keys" array)' };
  return { keys: jwks as ReceiptKeySource };
}

/** When the receipt expires (ISO 8601), for an `expired` refusal; undefined when it cannot be read. */
function expiryOf(receipt: string): string | undefined {
  try {
    const { exp } = describeReceipt(receipt).claims;
    return Number.isFinite(exp) ? time(exp) : undefined;
  } catch {
    return undefined;
  }
}

const time = (seconds: number) => new Date(seconds * 1000).toISOString();
const quoted = (value: string) => oneLine(JSON.stringify(value));

/**
 * Verify `receipt` with the keys of `options.jwks`, fetched from an http(s)
 * URL (jose's remote JWKS, 5 s timeout) or read from a file: shape, `alg` EdDSA, `typ`, `kid` in the set, the
 * Ed25519 signature, the claims, `iss` when `--issuer` is given, and the time.
 * It does NOT check what the receipt approves against an action, nor single
 * use: that is the executor's job, and the lines say so. An authentic receipt past its lifetime is
 * refused (exit 1) with a hint to verify it as of its time of use (`--at`).
 * @returns the lines to print and the exit code (2 when the keys cannot be
 *   fetched or the file is not a JWKS); never throws for a bad receipt.
 * @throws {UsageError} for a `--jwks` that is neither an http(s) URL nor a
 *   file (path or `file://` URL), or an `--at` that is not a time.
 */
export async function verifyReceiptCommand(
  receipt: string,
  options: ReceiptVerifyOptions,
): Promise<ReceiptVerdict> {
  const { source, now } = parseOptions(options);
  const jwks = oneLine(source.url ? source.url.href : source.file);
  let keys: ReceiptKeySource;
  if (source.url) keys = source.url;
  else {
    const read = await readJwks(source.file);
    if ('why' in read)
      return {
        exitCode: 2,
        lines: [`Could not load the keys from ${jwks}: ${read.why}. Nothing was verified.`],
      };
    keys = read.keys;
  }
  let kid: string;
  try {
    ({ kid } = await verifyReceiptSignature(receipt.trim(), {
      keys,
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
    if (error.code === 'expired') {
      // Refused only after its signature and issuer checked out (the order @mrtr/receipt documents).
      const until = expiryOf(receipt.trim());
      return {
        exitCode: 1,
        lines: [
          `Receipt NOT verified as of ${now === undefined ? 'now' : new Date(now).toISOString()} (expired): its signature checks out with the keys of ${jwks}, but the receipt is outside its lifetime${until ? ` (it expired at ${until})` : ''}.`,
          'Receipts are short-lived, so this alone does not mean it was forged or misused. To check it as of when it was used, run again with --at <time of use>, e.g. the time of its audit record.',
        ],
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
