/**
 * `mrtr receipt verify <receipt> --jwks <url-or-file>`: check a signed
 * approval receipt (`@mrtr/receipt`) against the issuer's published keys (or
 * a copy of them archived in a file) and say, in plain lines, what it proves
 * and what it does not.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CanonicalizeError, digestJson } from '@mrtr/digest';
import {
  actionMismatch,
  DEFAULT_CLOCK_TOLERANCE_SECONDS,
  describeReceipt,
  type ExpectedAction,
  RECEIPT_LEVELS,
  type ReceiptClaims,
  ReceiptError,
  type ReceiptErrorCode,
  type ReceiptKeySource,
  type ReceiptLevel,
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
  /**
   * With {@link arguments}: the operation the receipt must approve,
   * `<method>:<name>` as the gate spells it, e.g. `tools/call:delete_service`.
   */
  operation?: string;
  /**
   * With {@link operation}: the arguments the receipt must approve, as JSON
   * text or `@<file>` holding it. Their RFC 8785 digest must equal the
   * receipt's argument digest (member order and whitespace do not matter).
   */
  arguments?: string;
  /**
   * The accepted answer's content (JSON text or `@<file>`) the receipt must
   * approve; absent, the answer is not checked (unlike `verifyReceipt`, which
   * takes an absent content as `{}`: a person checking a receipt may not hold
   * the answer).
   */
  content?: string;
  /** The principal who must have approved. */
  principal?: string;
  /** The weakest confirmation level accepted: `form` (default), `url` or `passkey`. */
  minLevel?: string;
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
  ambiguous_key: (jwks) =>
    `the key set at ${jwks} holds several keys under its key id, so which one signed cannot be told: the issuer must publish each key id once`,
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
  if (options.issuer === '') throw new UsageError('--issuer must not be empty');
  if (options.at === undefined) return { source };
  const now = Date.parse(options.at);
  if (Number.isNaN(now))
    throw new UsageError(
      `--at must be a time such as 2026-11-30T12:00:00Z, got "${oneLine(options.at)}"`,
    );
  return { source, now };
}

/**
 * The action the receipt must approve, from `--operation`, `--arguments`,
 * `--content`, `--principal` and `--min-level`; `undefined` when none is given.
 * @throws {UsageError} for one given without `--operation` and `--arguments`,
 *   JSON that does not parse, a file that cannot be read, or an unknown level.
 */
async function expectedAction(options: ReceiptVerifyOptions): Promise<ExpectedAction | undefined> {
  const { operation, principal, minLevel } = options;
  const given = [operation, options.arguments, options.content, principal, minLevel];
  if (given.every((value) => value === undefined)) return undefined;
  if (operation === undefined || options.arguments === undefined)
    throw new UsageError(
      'to check what a receipt approves, give both --operation (e.g. tools/call:delete_service) and --arguments (JSON, or @file); --content, --principal and --min-level go with them',
    );
  if (operation === '') throw new UsageError('--operation must not be empty');
  if (principal === '') throw new UsageError('--principal must not be empty');
  if (minLevel !== undefined && !(RECEIPT_LEVELS as readonly string[]).includes(minLevel))
    throw new UsageError(`--min-level must be form, url or passkey, got "${oneLine(minLevel)}"`);
  return {
    operation,
    arguments: await objectOption('--arguments', options.arguments),
    ...(options.content !== undefined
      ? { content: await objectOption('--content', options.content) }
      : {}),
    ...(principal !== undefined ? { principal } : {}),
    ...(minLevel !== undefined ? { minLevel: minLevel as ReceiptLevel } : {}),
  };
}

/**
 * The JSON object of an option given as JSON text or `@<file>`: a tool's
 * arguments (`params.arguments`) and a form's answer (`content`) are objects,
 * so anything else is a mistake, not a value to compare.
 * @throws {UsageError}
 */
async function objectOption(name: string, value: string): Promise<Record<string, unknown>> {
  const parsed = await jsonOption(name, value);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new UsageError(`${name} must be a JSON object`);
  return parsed as Record<string, unknown>;
}

/** The JSON value of an option given as JSON text or as `@<file>` holding it. @throws {UsageError} */
async function jsonOption(name: string, value: string): Promise<unknown> {
  let text = value;
  if (value.startsWith('@')) {
    if (value === '@') throw new UsageError(`${name} @ names no file: write @<path>`);
    const file = resolve(value.slice(1));
    const read = await readSmallFile(file);
    if ('why' in read)
      throw new UsageError(
        `${name} names a file that cannot be read (${oneLine(file)}): ${read.why}`,
      );
    text = read.text;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    // The parser's message quotes the text: fine for what was typed, never for a file's content.
    throw new UsageError(
      value.startsWith('@')
        ? `${name} names a file that is not JSON (${oneLine(resolve(value.slice(1)))})`
        : `${name} must be JSON, or @file: ${oneLine(error instanceof Error ? error.message : String(error))}`,
    );
  }
}

/** The RFC 8785 digest of a value given on the command line, for a person; a sentence when it has none. */
function givenDigest(value: unknown): string {
  try {
    return digestJson(value);
  } catch (error) {
    if (error instanceof CanonicalizeError)
      return `none (they hold what JSON cannot carry exactly: ${oneLine(error.message)})`;
    throw error;
  }
}

/** Why a receipt whose signature checked out does not approve the action given. */
function mismatch(
  code: NonNullable<ReturnType<typeof actionMismatch>>,
  claims: ReceiptClaims,
  expected: ExpectedAction,
): string {
  switch (code) {
    case 'operation_mismatch':
      return `it approves the operation ${quoted(claims.op)}, not ${quoted(expected.operation)}`;
    case 'arguments_mismatch':
      return `it approves the arguments whose RFC 8785 digest is ${claims.ad}; the digest of --arguments is ${givenDigest(expected.arguments)}`;
    case 'content_mismatch':
      return `it approves the answer whose RFC 8785 digest is ${claims.cd ?? `${givenDigest({})} (the empty answer {})`}; the digest of --content is ${givenDigest(expected.content)}`;
    case 'principal_mismatch':
      return `it was approved by ${quoted(claims.sub)}, not ${quoted(expected.principal ?? '')}`;
    case 'insufficient_level':
      return `it was confirmed at level ${claims.lvl}, below --min-level ${expected.minLevel}`;
  }
}

/** Largest file `--jwks`, `--arguments @file` and `--content @file` read, bytes (8 MiB). */
const MAX_FILE_BYTES = 8 * 1024 * 1024;

/** Decodes a file's bytes, refusing any that are not UTF-8 instead of turning them into U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The UTF-8 text of the regular file `file`, or why it cannot be used. At
 * most {@link MAX_FILE_BYTES} + 1 bytes are read, so a huge file is refused
 * instead of filling memory; a FIFO, a device or a socket is refused without
 * reading (opened non-blocking: a FIFO with no writer would wait forever).
 */
async function readSmallFile(file: string): Promise<{ text: string } | { why: string }> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = await handle.stat();
    if (stat.isDirectory()) return { why: 'it is a directory' };
    if (!stat.isFile()) return { why: 'it is not a regular file' };
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_FILE_BYTES) return { why: `it is larger than ${MAX_FILE_BYTES} bytes` };
    }
    try {
      return { text: utf8.decode(buffer.subarray(0, length)) };
    } catch {
      return { why: 'it is not UTF-8 text' };
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return {
      why:
        code === 'ENOENT'
          ? 'no such file'
          : oneLine(error instanceof Error ? error.message : String(error)),
    };
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** The JWKS in `file`, or why it cannot be used (never quoting the file: it may not be a JWKS at all). */
async function readJwks(file: string): Promise<{ keys: ReceiptKeySource } | { why: string }> {
  const read = await readSmallFile(file);
  if ('why' in read) return read;
  const { text } = read;
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

/**
 * The claims a receipt states, read without verifying, for a refusal that
 * came after its signature checked out (`expired`, `wrong_issuer`);
 * undefined when they cannot be read.
 */
function statedClaims(receipt: string): ReceiptClaims | undefined {
  try {
    return describeReceipt(receipt).claims;
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
 * With `--operation` and `--arguments` (and optionally `--content`,
 * `--principal`, `--min-level`) it then checks that the receipt approves
 * exactly that action, as `verifyReceipt` of `@mrtr/receipt` does (the
 * content only when given); a receipt for another action is refused (exit 1)
 * with both digests. It never checks single use: that is the executor's
 * job, and the lines say so. An authentic receipt past its lifetime is
 * refused (exit 1) with a hint to verify it as of its time of use (`--at`).
 * @returns the lines to print and the exit code (2 when the keys cannot be
 *   fetched or the file is not a JWKS); never throws for a bad receipt.
 * @throws {UsageError} for a `--jwks` that is neither an http(s) URL nor a
 *   file (path or `file://` URL), an empty `--issuer`, an `--at` that is not a time, or an action
 *   option without `--operation` and `--arguments`, that is not JSON, or
 *   whose `@file` cannot be read.
 */
export async function verifyReceiptCommand(
  receipt: string,
  options: ReceiptVerifyOptions,
): Promise<ReceiptVerdict> {
  const { source, now } = parseOptions(options);
  const expected = await expectedAction(options);
  const text = receipt.trim();
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
  let verified: Awaited<ReturnType<typeof verifyReceiptSignature>>;
  try {
    verified = await verifyReceiptSignature(text, {
      keys,
      ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
      ...(now !== undefined ? { now } : {}),
    });
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
      const exp = statedClaims(text)?.exp;
      const until = exp !== undefined && Number.isFinite(exp) ? time(exp) : undefined;
      return {
        exitCode: 1,
        lines: [
          `Receipt NOT verified as of ${now === undefined ? 'now' : new Date(now).toISOString()} (expired): its signature checks out with the keys of ${jwks}, but the receipt is outside its lifetime${until ? ` (it expired at ${until})` : ''}.`,
          'Receipts are short-lived, so this alone does not mean it was forged or misused. To check it as of when it was used, run again with --at <time of use>, e.g. the time of its audit record.',
        ],
      };
    }
    let why = WHY[error.code]?.(jwks) ?? error.message;
    if (error.code === 'wrong_issuer') {
      // Its signature checked out before the issuer was compared, so its iss can be named.
      const iss = statedClaims(text)?.iss;
      if (iss !== undefined)
        why = `it was issued by ${quoted(iss)}, not by --issuer ${quoted(options.issuer ?? '')}`;
    }
    return {
      exitCode: 1,
      lines: [`Receipt NOT verified (${error.code}): ${why}.`, 'It proves nothing.'],
    };
  }
  const { kid } = verified;
  // Checked only once the signature, issuer and time checked out, as verifyReceipt does; the
  // answer only when --content is given (a person checking a receipt may not hold it).
  const wrong = expected && actionMismatch(verified.claims, expected, { content: 'when-given' });
  if (expected && wrong)
    return {
      exitCode: 1,
      lines: [
        `Receipt NOT verified for the action given (${wrong}): ${mismatch(wrong, verified.claims, expected)}.`,
        `Its signature checks out with the keys of ${jwks}, but it does not approve this action: acting on it would act without approval.`,
      ],
    };
  const { claims, proves, doesNotProve } = describeReceipt(text);
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
      `  expires at       ${time(claims.exp)} (this check accepts it ${DEFAULT_CLOCK_TOLERANCE_SECONDS} s longer, for clock skew)`,
      '',
      'It proves:',
      ...proves.map((line) => `  - ${oneLine(line)}`),
      ...(expected ? ['', ...approvesExactly(expected)] : []),
      'It does not prove:',
      ...doesNotProve
        .filter((line) => !line.startsWith('anything, until'))
        .map((line) => `  - ${oneLine(line)}`),
      ...(expected
        ? []
        : [
            '  - that these arguments are the ones you have in mind: give them with --operation and --arguments, or compare their digest (digestJson of @mrtr/digest) with the argument digest',
          ]),
    ],
  };
}

/** The lines saying which parts of the action given the receipt was checked against. */
function approvesExactly(expected: ExpectedAction): string[] {
  return [
    'It approves exactly the action given:',
    `  - the operation ${quoted(expected.operation)}`,
    `  - the arguments of --arguments (RFC 8785 digest ${givenDigest(expected.arguments)})`,
    expected.content === undefined
      ? '  - (not the answer: give --content to check it too)'
      : `  - the answer of --content (RFC 8785 digest ${givenDigest(expected.content)})`,
    ...(expected.principal !== undefined
      ? [`  - approved by the principal ${quoted(expected.principal)}`]
      : []),
    ...(expected.minLevel !== undefined ? [`  - at level ${expected.minLevel} or higher`] : []),
  ];
}
