import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { expect } from 'vitest';
import {
  TICKET_HKDF_INFO,
  TICKET_HKDF_SALT,
  type TicketBinding,
  type TicketClaimsInput,
  type TicketFailureReason,
  type TicketOpenResult,
  TicketSealer,
  type TicketSealerOptions,
} from '../src/index.js';

export const SECRET_1 = 'k1-master-secret-0123456789abcdefghij'; // 37 bytes
export const SECRET_2 = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff);
export const B64URL_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
export const ALL_REASONS: TicketFailureReason[] = [
  'malformed',
  'version',
  'kid',
  'mac',
  'principal',
  'expired',
  'not_yet_valid',
  'too_large',
];

export const INPUT: TicketClaimsInput<{ noteId: string; size: number }> = {
  sub: 'principal-alice-7f3e9c',
  op: 'tools/call:notes_delete',
  argsDigest: 'sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  inputKey: 'delete_choice',
  candidates: ['note-1', 'note-2'],
  phase: 'confirm',
  data: { noteId: 'note-1', size: 1234 },
};
export const BINDING: TicketBinding = {
  sub: INPUT.sub,
  op: INPUT.op,
  argsDigest: INPUT.argsDigest,
};

/** A clock the test moves by hand, in milliseconds. */
export function clock(startMs: number) {
  const c = { ms: startMs, now: () => c.ms };
  return c;
}

export function sealer(options: Partial<TicketSealerOptions> = {}): TicketSealer {
  return new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET_1 }], ...options });
}

export function parts(ticket: string): { version: string; kid: string; body: string } {
  const [version, kid, body] = ticket.split('.') as [string, string, string];
  return { version, kid, body };
}

export function expectFailure(result: TicketOpenResult, reasons: TicketFailureReason[]): void {
  expect(result.ok).toBe(false);
  // Exactly {ok, reason}: no claims, no kid, nothing of the payload.
  expect(Object.keys(result).sort()).toEqual(['ok', 'reason']);
  if (!result.ok) expect(reasons).toContain(result.reason);
}

// ---- An independent implementation of the documented v1 format, for tests only. ----

const utf8 = (s: string) => new TextEncoder().encode(s);

export function subkey(secret: string | Uint8Array, kid: string): Uint8Array {
  const ikm = typeof secret === 'string' ? utf8(secret) : secret;
  return hkdf(sha256, ikm, utf8(TICKET_HKDF_SALT), utf8(`${TICKET_HKDF_INFO}/${kid}`), 32);
}

/** Unsigned LEB128, as the README describes it. */
export function uvarint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  do {
    const low = v % 128;
    v = Math.floor(v / 128);
    out.push(v > 0 ? low | 0x80 : low);
  } while (v > 0);
  return out;
}

export function str(s: string): number[] {
  const b = [...utf8(s)];
  return [...uvarint(b.length), ...b];
}

/** `str("v1.<kid>") ‖ str(op) ‖ str(argsDigest)`. */
export function handAad(version: string, kid: string, op: string, argsDigest: string): Uint8Array {
  return Uint8Array.from([...str(`${version}.${kid}`), ...str(op), ...str(argsDigest)]);
}

/** The documented plaintext layout, written out by hand. */
export function handPlaintext(c: {
  nonce: Uint8Array;
  iat: number;
  exp: number;
  sub: string;
  inputKey: string;
  phase: string;
  question?: Uint8Array;
  approval?: Uint8Array;
  candidates?: string[];
  data?: unknown;
}): Uint8Array {
  const flags =
    (c.candidates ? 1 : 0) |
    (c.data !== undefined ? 2 : 0) |
    (c.question ? 4 : 0) |
    (c.approval ? 8 : 0);
  const bytes = [
    flags,
    ...c.nonce,
    ...uvarint(c.iat),
    ...uvarint(c.exp - c.iat),
    ...str(c.sub),
    ...str(c.inputKey),
    ...str(c.phase),
  ];
  if (c.question) bytes.push(...c.question);
  if (c.approval) bytes.push(...c.approval);
  if (c.candidates) bytes.push(...uvarint(c.candidates.length), ...c.candidates.flatMap(str));
  if (c.data !== undefined) bytes.push(...str(JSON.stringify(c.data)));
  return Uint8Array.from(bytes);
}

/** Seal any plaintext by hand under the documented format (noble's XChaCha20-Poly1305). */
export function handSealed(
  plaintext: Uint8Array,
  options: {
    kid?: string;
    secret?: string | Uint8Array;
    op?: string;
    argsDigest?: string;
    version?: string;
  } = {},
): string {
  const {
    kid = 'k1',
    secret = SECRET_1,
    op = INPUT.op,
    argsDigest = INPUT.argsDigest,
    version = 'v1',
  } = options;
  const nonce = new Uint8Array(24).fill(7);
  const sealed = xchacha20poly1305(
    subkey(secret, kid),
    nonce,
    handAad(version, kid, op, argsDigest),
  ).encrypt(plaintext);
  return `${version}.${kid}.${Buffer.concat([nonce, sealed]).toString('base64url')}`;
}
