import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_SKEW_SECONDS,
  DEFAULT_MAX_TICKET_LENGTH,
  DEFAULT_TTL_SECONDS,
  TICKET_HKDF_INFO,
  TICKET_VERSION,
  type TicketClaimsInput,
  TicketConfigError,
  type TicketFailureReason,
  type TicketOpenResult,
  TicketSealer,
} from '../src/index.js';

const SECRET_1 = 'k1-master-secret-0123456789abcdefghij'; // 37 bytes
const SECRET_2 = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff);
const B64URL_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const INPUT: TicketClaimsInput<{ noteId: string; size: number }> = {
  sub: 'principal-alice-7f3e9c',
  op: 'tools/call:notes_delete',
  ad: 'sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  key: 'delete_choice',
  cand: ['note-1', 'note-2'],
  ph: 'confirm',
  app: { noteId: 'note-1', size: 1234 },
};

/** A clock the test moves by hand, in milliseconds. */
function clock(startMs: number) {
  const c = { ms: startMs, now: () => c.ms };
  return c;
}

function sealer(
  options: Partial<ConstructorParameters<typeof TicketSealer>[0]> = {},
): TicketSealer {
  return new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET_1 }], ...options });
}

function parts(ticket: string): { version: string; kid: string; body: string } {
  const [version, kid, body] = ticket.split('.') as [string, string, string];
  return { version, kid, body };
}

function expectFailure(result: TicketOpenResult, reasons: TicketFailureReason[]): void {
  expect(result.ok).toBe(false);
  // Exactly {ok, reason}: no claims, no kid, nothing of the payload.
  expect(Object.keys(result).sort()).toEqual(['ok', 'reason']);
  if (!result.ok) expect(reasons).toContain(result.reason);
}

function subkey(secret: string | Uint8Array, kid: string): Uint8Array {
  const ikm = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  const enc = new TextEncoder();
  return hkdf(
    sha256,
    ikm,
    enc.encode('mrtr-gate/ticket/salt/v1'),
    enc.encode(`${TICKET_HKDF_INFO}/${kid}`),
    32,
  );
}

/** Build a ticket by hand from the documented format, with any plaintext. */
function handSealed(kid: string, secret: string | Uint8Array, plaintext: Uint8Array): string {
  const nonce = new Uint8Array(24).fill(7);
  const aad = new TextEncoder().encode(`${TICKET_VERSION}.${kid}`);
  const sealed = xchacha20poly1305(subkey(secret, kid), nonce, aad).encrypt(plaintext);
  return `${TICKET_VERSION}.${kid}.${Buffer.concat([nonce, sealed]).toString('base64url')}`;
}

describe('seal and open', () => {
  it('round-trips the claims and adds n, iat and exp', () => {
    const c = clock(1_800_000_000_500);
    const s = sealer({ now: c.now });
    const { ticket, claims } = s.seal(INPUT);
    expect(claims).toEqual({
      ...INPUT,
      n: claims.n,
      iat: 1_800_000_000,
      exp: 1_800_000_000 + DEFAULT_TTL_SECONDS,
    });
    const opened = s.open<{ noteId: string; size: number }>(ticket);
    expect(opened).toEqual({ ok: true, claims, kid: 'k1' });
    if (opened.ok) expect(opened.claims.app?.noteId).toBe('note-1');
  });

  it('has the compact form v1.<kid>.<base64url>', () => {
    const { ticket } = sealer().seal(INPUT);
    expect(ticket).toMatch(/^v1\.k1\.[A-Za-z0-9_-]+$/);
    expect(TICKET_VERSION).toBe('v1');
    // 24-byte nonce + JSON claims + 16-byte tag.
    expect(Buffer.from(parts(ticket).body, 'base64url').length).toBeGreaterThan(40);
  });

  it('round-trips claims without the optional cand and app', () => {
    const s = sealer();
    const { ticket, claims } = s.seal({
      sub: 'bob',
      op: 'tools/call:x',
      ad: 'sha256:x',
      key: 'k',
      ph: 'p',
    });
    expect(claims.cand).toBeUndefined();
    expect(s.open(ticket)).toEqual({ ok: true, claims, kid: 'k1' });
  });

  it('gives every seal a fresh 128-bit nonce and a different ticket for the same claims', () => {
    const s = sealer({ now: () => 1_800_000_000_000 });
    const nonces = new Set<string>();
    const tickets = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { ticket, claims } = s.seal(INPUT);
      expect(claims.n).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Buffer.from(claims.n, 'base64url')).toHaveLength(16);
      nonces.add(claims.n);
      tickets.add(ticket);
    }
    expect(nonces.size).toBe(200);
    expect(tickets.size).toBe(200);
  });

  it('overrides n, iat and exp smuggled into the input', () => {
    const s = sealer({ now: () => 1_800_000_000_000 });
    const smuggled = {
      ...INPUT,
      n: 'chosen-by-caller',
      iat: 1,
      exp: 9_999_999_999,
    } as TicketClaimsInput;
    const { claims } = s.seal(smuggled);
    expect(claims.n).not.toBe('chosen-by-caller');
    expect(claims.iat).toBe(1_800_000_000);
    expect(claims.exp).toBe(1_800_000_000 + DEFAULT_TTL_SECONDS);
  });

  it('honours ttlSeconds', () => {
    const s = sealer({ now: () => 1_800_000_000_000, ttlSeconds: 60 });
    expect(s.ttlSeconds).toBe(60);
    expect(s.seal(INPUT).claims.exp).toBe(1_800_000_060);
  });

  it('opens a ticket built independently from the documented format (HKDF + XChaCha20-Poly1305)', () => {
    const claims = {
      ...INPUT,
      n: 'AAAAAAAAAAAAAAAAAAAAAA',
      iat: 1_800_000_000,
      exp: 1_800_000_300,
    };
    const ticket = handSealed('k1', SECRET_1, new TextEncoder().encode(JSON.stringify(claims)));
    const s = sealer({ now: () => 1_800_000_100_000 });
    expect(s.open(ticket)).toEqual({ ok: true, claims, kid: 'k1' });
  });

  it('reports a genuine ticket whose plaintext is not valid claims as malformed', () => {
    const s = sealer({ now: () => 1_800_000_100_000 });
    const enc = new TextEncoder();
    const bad = [
      enc.encode('not json'),
      enc.encode('null'),
      enc.encode('[]'),
      enc.encode(JSON.stringify({ ...INPUT, n: 'x', iat: '1800000000', exp: 1_800_000_300 })),
      enc.encode(JSON.stringify({ ...INPUT, n: 'x', iat: 1_800_000_000, exp: 1.5 })),
      enc.encode(
        JSON.stringify({ ...INPUT, n: 'x', iat: 1_800_000_000, exp: 1_800_000_300, cand: [1] }),
      ),
      enc.encode(JSON.stringify({ op: 'x', ad: 'y', key: 'k', ph: 'p', n: 'x', iat: 1, exp: 2 })),
      new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), // not UTF-8
    ];
    for (const plaintext of bad)
      expectFailure(s.open(handSealed('k1', SECRET_1, plaintext)), ['malformed']);
  });
});

describe('tampering', () => {
  it('any single-character change of the body gives mac or malformed, never ok and never the payload', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    const { body } = parts(ticket);
    const prefix = ticket.slice(0, ticket.length - body.length);
    const seen = new Set<TicketFailureReason>();
    for (let i = 0; i < body.length; i++) {
      const at = B64URL_CHARS.indexOf(body[i] as string);
      // Two different base64url characters and one outside the alphabet, at every position.
      for (const replacement of [
        B64URL_CHARS[(at + 1) % 64],
        B64URL_CHARS[(at + 33) % 64],
        '=',
      ] as string[]) {
        const tampered = `${prefix}${body.slice(0, i)}${replacement}${body.slice(i + 1)}`;
        const result = s.open(tampered);
        expectFailure(result, ['mac', 'malformed']);
        if (!result.ok) seen.add(result.reason);
      }
    }
    expect(seen).toEqual(new Set(['mac', 'malformed']));
  });

  it('any single-character change of the version or key id is refused', () => {
    const s = new TicketSealer({
      keys: [
        { kid: 'k1', secret: SECRET_1 },
        { kid: 'k2', secret: SECRET_1 },
      ],
    });
    const { ticket } = s.seal(INPUT);
    for (let i = 0; i < 'v1.k1.'.length; i++) {
      for (const replacement of ['2', 'x', '.', 'V']) {
        if (ticket[i] === replacement) continue;
        const tampered = `${ticket.slice(0, i)}${replacement}${ticket.slice(i + 1)}`;
        expectFailure(s.open(tampered), ['version', 'kid', 'mac', 'malformed']);
      }
    }
  });

  it('binds the key id: moving a ticket to another kid of the ring fails the MAC even with the same secret', () => {
    const s = new TicketSealer({
      keys: [
        { kid: 'k1', secret: SECRET_1 },
        { kid: 'k2', secret: SECRET_1 },
      ],
    });
    const { ticket } = s.seal(INPUT);
    expectFailure(s.open(ticket.replace(/^v1\.k1\./, 'v1.k2.')), ['mac']);
  });

  it('appending a character is refused: malformed, or mac where the longer body still decodes', () => {
    const s = sealer();
    const residues = new Set<number>();
    // Three sub lengths cover the three body lengths mod 4 that base64url produces (0, 2, 3).
    for (const sub of ['a', 'ab', 'abc']) {
      const { ticket } = s.seal({ ...INPUT, sub });
      const bodyLength = parts(ticket).body.length;
      residues.add(bodyLength % 4);
      for (const extra of ['A', 'Q', 'w', '_', '-', '=', '.', '.x', ' ', '\n']) {
        expectFailure(s.open(`${ticket}${extra}`), ['malformed', 'mac']);
      }
      // A body of 4k + 1 characters is never base64url.
      if (bodyLength % 4 === 0) expectFailure(s.open(`${ticket}A`), ['malformed']);
      // After 4k + 2 characters, a third one with non-zero padding bits is not the canonical spelling.
      if (bodyLength % 4 === 2) expectFailure(s.open(`${ticket}B`), ['malformed']);
    }
    expect(residues).toEqual(new Set([0, 2, 3]));
  });

  it('truncating the body gives mac or malformed', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    for (const cut of [1, 2, 3, 4, 10, ticket.length - 10]) {
      expectFailure(s.open(ticket.slice(0, ticket.length - cut)), ['malformed', 'mac']);
    }
  });

  it('a changed version gives version, a wrong shape gives malformed', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    const { kid, body } = parts(ticket);
    expectFailure(s.open(`v2.${kid}.${body}`), ['version']);
    expectFailure(s.open(`V1.${kid}.${body}`), ['version']);
    expectFailure(s.open(`v0.${kid}.${body}`), ['version']);
    expectFailure(s.open(`.${kid}.${body}`), ['version']);
    expectFailure(s.open(`${kid}.${body}`), ['malformed']);
    expectFailure(s.open(`v1.${kid}.${body}.`), ['malformed']);
    expectFailure(s.open(`v1.${kid}`), ['malformed']);
    expectFailure(s.open(`v1.${kid}.`), ['malformed']);
    expectFailure(s.open(''), ['malformed']);
    expectFailure(s.open('v1.k1.AAAA'), ['malformed']);
    expectFailure(s.open(`v1.${kid}.${body.slice(0, 10)}+/${body.slice(12)}`), ['malformed']);
  });

  it('an unknown key id gives kid', () => {
    const s = sealer();
    const { body } = parts(s.seal(INPUT).ticket);
    expectFailure(s.open(`v1.k9.${body}`), ['kid']);
    expectFailure(s.open(`v1..${body}`), ['kid']);
  });

  it('non-string input is malformed', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    for (const value of [
      undefined,
      null,
      42,
      true,
      {},
      [ticket],
      { ticket },
      Buffer.from(ticket),
      new String(ticket),
    ]) {
      expectFailure(s.open(value), ['malformed']);
    }
  });
});

describe('size limit', () => {
  it('refuses a ticket longer than the default 4096 characters with too_large', () => {
    const s = sealer();
    expect(DEFAULT_MAX_TICKET_LENGTH).toBe(4096);
    const { ticket } = s.seal(INPUT);
    const long = `${ticket}${'A'.repeat(4097 - ticket.length)}`;
    expect(long).toHaveLength(4097);
    expectFailure(s.open(long), ['too_large']);
    expectFailure(s.open('x'.repeat(100_000)), ['too_large']);
    // At exactly the limit the length check passes and the next check decides.
    expectFailure(s.open(`${ticket}${'A'.repeat(4096 - ticket.length)}`), ['malformed', 'mac']);
  });

  it('applies a configured maxTicketLength, to genuine tickets too', () => {
    const loose = sealer();
    const { ticket } = loose.seal(INPUT);
    expect(sealer({ maxTicketLength: ticket.length }).open(ticket).ok).toBe(true);
    expectFailure(sealer({ maxTicketLength: ticket.length - 1 }).open(ticket), ['too_large']);
  });
});

describe('expiry with an injected clock', () => {
  const T0 = 1_800_000_000_000; // ms, a whole second
  const iat = T0 / 1000;
  const exp = iat + DEFAULT_TTL_SECONDS;
  const skew = DEFAULT_MAX_SKEW_SECONDS;

  function sealedAtT0() {
    const c = clock(T0);
    const s = sealer({ now: c.now });
    const { ticket } = s.seal(INPUT);
    return { c, s, ticket };
  }

  it('is valid through exp + skew, and expired from the next second', () => {
    const { c, s, ticket } = sealedAtT0();
    c.ms = exp * 1000;
    expect(s.open(ticket).ok).toBe(true);
    c.ms = (exp + skew) * 1000 + 999;
    expect(s.open(ticket).ok).toBe(true);
    c.ms = (exp + skew + 1) * 1000;
    expectFailure(s.open(ticket), ['expired']);
    c.ms = (exp + 10_000) * 1000;
    expectFailure(s.open(ticket), ['expired']);
  });

  it('tolerates an issuer clock up to skew seconds ahead, and refuses beyond as not_yet_valid', () => {
    const { c, s, ticket } = sealedAtT0();
    c.ms = (iat - skew) * 1000;
    expect(s.open(ticket).ok).toBe(true);
    c.ms = (iat - skew - 1) * 1000 + 999;
    expectFailure(s.open(ticket), ['not_yet_valid']);
    c.ms = (iat - 3600) * 1000;
    expectFailure(s.open(ticket), ['not_yet_valid']);
  });

  it('uses the configured skew', () => {
    const c = clock(T0);
    const s = sealer({ now: c.now, maxSkewSeconds: 0, ttlSeconds: 10 });
    const { ticket } = s.seal(INPUT);
    c.ms = T0 + 10_999;
    expect(s.open(ticket).ok).toBe(true);
    c.ms = T0 + 11_000;
    expectFailure(s.open(ticket), ['expired']);
    c.ms = T0 - 1;
    expectFailure(s.open(ticket), ['not_yet_valid']);
  });

  it('checks integrity before time: a tampered expired ticket is mac, not expired', () => {
    const { c, s, ticket } = sealedAtT0();
    c.ms = (exp + skew + 100) * 1000;
    const { body } = parts(ticket);
    const i = 30;
    const flipped = B64URL_CHARS[(B64URL_CHARS.indexOf(body[i] as string) + 1) % 64];
    expectFailure(s.open(`v1.k1.${body.slice(0, i)}${flipped}${body.slice(i + 1)}`), ['mac']);
  });
});

describe('key rotation', () => {
  it('old tickets open after rotation, new ones use the new key, and dropping the old key refuses them', () => {
    const before = new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET_1 }] });
    const old = before.seal(INPUT);

    const during = new TicketSealer({
      keys: [
        { kid: 'k2', secret: SECRET_2 },
        { kid: 'k1', secret: SECRET_1 },
      ],
    });
    expect(during.open(old.ticket)).toEqual({ ok: true, claims: old.claims, kid: 'k1' });
    const fresh = during.seal(INPUT);
    expect(parts(fresh.ticket).kid).toBe('k2');
    expect(during.open(fresh.ticket)).toEqual({ ok: true, claims: fresh.claims, kid: 'k2' });
    expectFailure(before.open(fresh.ticket), ['kid']);

    const after = new TicketSealer({ keys: [{ kid: 'k2', secret: SECRET_2 }] });
    expectFailure(after.open(old.ticket), ['kid']);
    expect(after.open(fresh.ticket).ok).toBe(true);
  });

  it('a ticket sealed under one secret fails mac under a different secret with the same kid', () => {
    const a = new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET_1 }] });
    const b = new TicketSealer({ keys: [{ kid: 'k1', secret: `${SECRET_1}!` }] });
    const { ticket } = a.seal(INPUT);
    expectFailure(b.open(ticket), ['mac']);
    expect(a.open(ticket).ok).toBe(true);
  });

  it('a string secret and the Uint8Array of its UTF-8 bytes are the same key', () => {
    const a = new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET_1 }] });
    const b = new TicketSealer({
      keys: [{ kid: 'k1', secret: new TextEncoder().encode(SECRET_1) }],
    });
    expect(b.open(a.seal(INPUT).ticket).ok).toBe(true);
  });
});

describe('configuration', () => {
  const good = { kid: 'k1', secret: SECRET_1 };

  it.each<[string, () => TicketSealer]>([
    ['an empty ring', () => new TicketSealer({ keys: [] })],
    [
      'a 31-byte Uint8Array secret',
      () => new TicketSealer({ keys: [{ kid: 'k1', secret: new Uint8Array(31) }] }),
    ],
    [
      'a 31-byte string secret',
      () => new TicketSealer({ keys: [{ kid: 'k1', secret: 'x'.repeat(31) }] }),
    ],
    ['an empty secret', () => new TicketSealer({ keys: [{ kid: 'k1', secret: '' }] })],
    [
      'a short secret on a later key',
      () => new TicketSealer({ keys: [good, { kid: 'k2', secret: 'short' }] }),
    ],
    ['a duplicate kid', () => new TicketSealer({ keys: [good, { kid: 'k1', secret: SECRET_2 }] })],
    ['an empty kid', () => new TicketSealer({ keys: [{ kid: '', secret: SECRET_1 }] })],
    ['a kid with a dot', () => new TicketSealer({ keys: [{ kid: 'k.1', secret: SECRET_1 }] })],
    ['a kid with a space', () => new TicketSealer({ keys: [{ kid: 'k 1', secret: SECRET_1 }] })],
    ['a non-ASCII kid', () => new TicketSealer({ keys: [{ kid: 'clé', secret: SECRET_1 }] })],
    [
      'a 33-character kid',
      () => new TicketSealer({ keys: [{ kid: 'a'.repeat(33), secret: SECRET_1 }] }),
    ],
    ['ttlSeconds 0', () => new TicketSealer({ keys: [good], ttlSeconds: 0 })],
    ['a negative ttlSeconds', () => new TicketSealer({ keys: [good], ttlSeconds: -5 })],
    ['a fractional ttlSeconds', () => new TicketSealer({ keys: [good], ttlSeconds: 1.5 })],
    ['a negative maxSkewSeconds', () => new TicketSealer({ keys: [good], maxSkewSeconds: -1 })],
    ['a NaN maxSkewSeconds', () => new TicketSealer({ keys: [good], maxSkewSeconds: Number.NaN })],
  ])('throws TicketConfigError for %s', (_label, make) => {
    expect(make).toThrow(TicketConfigError);
    try {
      make();
    } catch (error) {
      expect((error as Error).name).toBe('TicketConfigError');
    }
  });

  it('accepts a 32-byte secret, a 32-character kid and every kid character class', () => {
    expect(
      () => new TicketSealer({ keys: [{ kid: 'a'.repeat(32), secret: new Uint8Array(32) }] }),
    ).not.toThrow();
    const s = new TicketSealer({ keys: [{ kid: 'Az09_-', secret: SECRET_2 }] });
    expect(s.open(s.seal(INPUT).ticket).ok).toBe(true);
  });

  it('counts a string secret in UTF-8 bytes', () => {
    expect(() => new TicketSealer({ keys: [{ kid: 'k1', secret: '€'.repeat(11) }] })).not.toThrow(); // 33 bytes
    expect(() => new TicketSealer({ keys: [{ kid: 'k1', secret: '€'.repeat(10) }] })).toThrow(
      TicketConfigError,
    ); // 30 bytes
  });
});

describe('confidentiality', () => {
  it('the ticket carries no plaintext of the claims, not even in base64', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    const body = Buffer.from(parts(ticket).body, 'base64url');
    for (const secret of [INPUT.sub, INPUT.op, 'note-1', 'delete_choice', 'notes_delete']) {
      const bytes = Buffer.from(secret, 'utf8');
      expect(ticket).not.toContain(secret);
      expect(body.includes(bytes)).toBe(false);
      // The base64 of the value at each of the three byte alignments, in both alphabets.
      for (let shift = 0; shift < 3; shift++) {
        const aligned = bytes.subarray(shift, shift + Math.floor((bytes.length - shift) / 3) * 3);
        expect(ticket).not.toContain(aligned.toString('base64url'));
        expect(ticket).not.toContain(aligned.toString('base64'));
      }
    }
    // A sanity check of the check: the base64 of the claims JSON would contain the sub at some alignment.
    const plainB64 = Buffer.from(JSON.stringify(INPUT)).toString('base64url');
    const bytes = Buffer.from(INPUT.sub, 'utf8');
    const found = [0, 1, 2].some((shift) =>
      plainB64.includes(
        bytes
          .subarray(shift, shift + Math.floor((bytes.length - shift) / 3) * 3)
          .toString('base64url'),
      ),
    );
    expect(found).toBe(true);
  });
});
