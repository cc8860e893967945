import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TicketFailureReason, TicketOpenResult } from '../src/index.js';
import {
  ALL_REASONS,
  B64URL_CHARS,
  BINDING,
  expectFailure,
  INPUT,
  parts,
  sealer,
} from './helpers.js';

const s = sealer();
const { ticket } = s.seal(INPUT);
const { body } = parts(ticket);
const header = ticket.slice(0, ticket.length - body.length); // "v1.k1."
const REPLACEMENTS = [
  ...B64URL_CHARS,
  '.',
  '=',
  '+',
  '/',
  ' ',
  '\n',
  '\u0000',
  'é',
  '😀',
  '\ud800',
];

/** A result that is one of the typed failures, or ok for the unchanged ticket only. */
function typed(result: TicketOpenResult, candidate: string): boolean {
  if (candidate === ticket) return result.ok;
  return !result.ok && ALL_REASONS.includes(result.reason) && Object.keys(result).length === 2;
}

// Tens of thousands of opens each: generous time when a whole monorepo tests on two shared cores.
const HEAVY = { timeout: 180_000 };

describe('every small change of a valid ticket is refused', HEAVY, () => {
  it('every single-character replacement, at every position, by 75 characters', () => {
    const seen = new Set<TicketFailureReason>();
    let count = 0;
    for (let i = 0; i < ticket.length; i++) {
      for (const r of REPLACEMENTS) {
        if (r === ticket[i]) continue;
        const changed = `${ticket.slice(0, i)}${r}${ticket.slice(i + 1)}`;
        const result = s.open(changed, BINDING);
        const allowed: TicketFailureReason[] =
          i < header.length ? ['version', 'kid', 'mac', 'malformed'] : ['mac', 'malformed'];
        expectFailure(result, allowed);
        if (!result.ok) seen.add(result.reason);
        count++;
      }
    }
    expect(count).toBeGreaterThan(ticket.length * 70);
    expect(seen).toEqual(new Set(['version', 'kid', 'mac', 'malformed']));
  });

  it('every single-byte change of the sealed bytes (nonce, ciphertext, tag), to all 255 other values, fails the tag', () => {
    const bytes = Buffer.from(body, 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      for (let v = 0; v < 256; v++) {
        if (v === bytes[i]) continue;
        const changed = Buffer.from(bytes);
        changed[i] = v;
        const result = s.open(`${header}${changed.toString('base64url')}`, BINDING);
        if (result.ok || result.reason !== 'mac') expectFailure(result, ['mac']);
      }
    }
  });

  it('every truncation, from the empty string to one character short', () => {
    for (let len = 0; len < ticket.length; len++) {
      expectFailure(s.open(ticket.slice(0, len), BINDING), ['malformed', 'version', 'kid', 'mac']);
    }
  });

  it('every one-character extension at either end, and longer tails', () => {
    for (const r of REPLACEMENTS) {
      expectFailure(s.open(`${ticket}${r}`, BINDING), ['malformed', 'mac']);
      expectFailure(s.open(`${r}${ticket}`, BINDING), ['malformed', 'version']);
    }
    for (const tail of ['AA', 'AAA', 'AAAA', 'AAAAAAAA', '.x', '..', body]) {
      expectFailure(s.open(`${ticket}${tail}`, BINDING), ['malformed', 'mac']);
    }
  });

  it('every body whose last character differs only in base64url padding bits is refused as malformed', () => {
    const residues = new Set<number>();
    // Three sub lengths give the three body lengths mod 4 that base64url produces (0, 2, 3).
    for (const sub of ['a', 'ab', 'abc']) {
      const t = s.seal({ ...INPUT, sub }).ticket;
      const b = parts(t).body;
      residues.add(b.length % 4);
      const idx = B64URL_CHARS.indexOf(b.at(-1) as string);
      // Data bits in the last character: 2 after 4k+2 characters, 4 after 4k+3, all 6 after 4k.
      const dataBits = ({ 2: 2, 3: 4, 0: 6 } as Record<number, number>)[b.length % 4] as number;
      const step = 2 ** (6 - dataBits);
      for (let k = 1; k < step; k++) {
        const alias = B64URL_CHARS[idx + k] as string; // same data bits, non-zero padding bits
        expectFailure(s.open(`${t.slice(0, -1)}${alias}`, { ...BINDING, sub }), ['malformed']);
      }
      expect(s.open(t, { ...BINDING, sub }).ok).toBe(true);
    }
    expect(residues).toEqual(new Set([0, 2, 3]));
  });
});

describe('canonical base64url', HEAVY, () => {
  it('accepts a final character exactly when re-encoding gives the same text, for every character and length', () => {
    const base = parts(ticket).body.slice(0, 60); // 60 ≡ 0 (mod 4)
    for (const pad of ['', 'A', 'AA', 'AAA']) {
      for (const c of B64URL_CHARS) {
        const text = `${base}${pad}${c}`;
        const canonical =
          text.length % 4 !== 1 && Buffer.from(text, 'base64url').toString('base64url') === text;
        const result = s.open(`${header}${text}`, BINDING);
        expectFailure(result, canonical ? ['mac'] : ['malformed']);
      }
    }
  });
});

describe(
  '100,000 random inputs (fast-check): only typed failures, never an exception',
  HEAVY,
  () => {
    const b64 = fc.constantFrom(...B64URL_CHARS);
    const strings = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.string({ unit: fc.constantFrom(...B64URL_CHARS, '.', '=', '+', '/'), maxLength: 300 }),
      // Well-shaped tickets with random bodies reach the AEAD.
      fc
        .string({ unit: b64, minLength: 50, maxLength: 250 })
        .map((b) => `v1.k1.${b}`),
      fc
        .tuple(
          fc.constantFrom('v1', 'v2', ''),
          fc.string({ maxLength: 40 }),
          fc.string({ unit: b64, maxLength: 200 }),
        )
        .map(([v, k, b]) => `${v}.${k}.${b}`),
      fc.string({
        unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
        maxLength: 200,
      }),
      fc.string({ unit: b64, minLength: 4000, maxLength: 4200 }).map((b) => `v1.k1.${b}`),
    );

    it('50,000 random strings', () => {
      fc.assert(
        fc.property(strings, (candidate) => {
          const result = s.open(candidate, BINDING);
          expect(typed(result, candidate)).toBe(true);
        }),
        { numRuns: 50_000 },
      );
    });

    it('50,000 random edit sequences of a valid ticket (insert, delete, replace, swap)', () => {
      const edit = fc.tuple(
        fc.constantFrom('insert', 'delete', 'replace', 'swap'),
        fc.nat(),
        fc.constantFrom(...REPLACEMENTS),
      );
      fc.assert(
        fc.property(fc.array(edit, { minLength: 1, maxLength: 6 }), (edits) => {
          let t = ticket;
          for (const [op, at, ch] of edits) {
            const i = t.length === 0 ? 0 : at % t.length;
            if (op === 'insert') t = `${t.slice(0, i)}${ch}${t.slice(i)}`;
            else if (op === 'delete') t = `${t.slice(0, i)}${t.slice(i + 1)}`;
            else if (op === 'replace') t = `${t.slice(0, i)}${ch}${t.slice(i + 1)}`;
            else if (i + 1 < t.length) t = `${t.slice(0, i)}${t[i + 1]}${t[i]}${t.slice(i + 2)}`;
          }
          const result = s.open(t, BINDING);
          expect(typed(result, t)).toBe(true);
        }),
        { numRuns: 50_000 },
      );
    });

    it('any JavaScript value, not only strings', () => {
      fc.assert(
        fc.property(fc.anything(), (value) => {
          const result = s.open(value, BINDING);
          expect(result).toEqual({
            ok: false,
            reason: typeof value === 'string' ? expect.any(String) : 'malformed',
          });
        }),
        { numRuns: 2_000 },
      );
    });
  },
);
