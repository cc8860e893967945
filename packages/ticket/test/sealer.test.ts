import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_SKEW_SECONDS,
  DEFAULT_MAX_TICKET_LENGTH,
  DEFAULT_TTL_SECONDS,
  TICKET_VERSION,
  type TicketClaimsInput,
  TicketConfigError,
  TicketSealer,
} from '../src/index.js';
import {
  BINDING,
  clock,
  expectFailure,
  handPlaintext,
  handSealed,
  INPUT,
  parts,
  SECRET_1,
  SECRET_2,
  sealer,
} from './helpers.js';

const T = 1_800_000_000; // Unix seconds

describe('seal and open', () => {
  it('round-trips the claims, adds n, iat and exp, and names the kid', () => {
    const s = sealer({ now: () => T * 1000 + 500 });
    const { ticket, claims } = s.seal(INPUT);
    expect(claims).toEqual({ ...INPUT, nonce: claims.nonce, iat: T, exp: T + DEFAULT_TTL_SECONDS });
    const opened = s.open<{ noteId: string; size: number }>(ticket, BINDING);
    expect(opened).toEqual({ ok: true, claims, kid: 'k1' });
    if (opened.ok) expect(opened.claims.data?.noteId).toBe('note-1');
  });

  it('has the compact form v1.<kid>.<base64url> and no padding', () => {
    const { ticket } = sealer().seal(INPUT);
    expect(ticket).toMatch(/^v1\.k1\.[A-Za-z0-9_-]+$/);
    expect(TICKET_VERSION).toBe('v1');
  });

  it('keeps the service deleter\'s delete_service ticket at 136 characters: 24 + 57 + 16 bytes behind "v1.k1."', () => {
    const s = sealer();
    const binding = {
      sub: 'user_5f2a',
      op: 'tools/call:delete_service',
      argsDigest: 'sha256:K8cwMDm1aquZJcBDcBuCGvOJ4GLdCP02GBFwC7WAf7g',
    };
    const { ticket } = s.seal({ ...binding, inputKey: 'confirm_delete', phase: 'confirm' });
    expect(Buffer.from(parts(ticket).body, 'base64url')).toHaveLength(24 + 57 + 16);
    expect(ticket).toHaveLength(136);
    expect(s.open(ticket, binding).ok).toBe(true);
  });

  it('does not grow with op or ad, which travel as associated data', () => {
    const s = sealer();
    const short = s.seal({ ...INPUT, op: 'x', argsDigest: 'y' }).ticket;
    const long = s.seal({
      ...INPUT,
      op: `tools/call:${'x'.repeat(500)}`,
      argsDigest: 'y'.repeat(500),
    }).ticket;
    expect(long).toHaveLength(short.length);
  });

  it('round-trips claims without the optional cand and app, and with empty and non-ASCII ones', () => {
    const s = sealer();
    for (const input of [
      { sub: 'bob', op: 'tools/call:x', argsDigest: 'sha256:x', inputKey: 'k', phase: 'p' },
      { ...INPUT, candidates: [], data: null },
      {
        ...INPUT,
        sub: 'zoë@example.com',
        inputKey: 'ключ',
        phase: '確認',
        candidates: ['😀', ''],
        data: ['é', 1.5, { a: [] }],
      },
      { ...INPUT, sub: '', inputKey: '', phase: '' },
      { ...INPUT, data: 'x'.repeat(300) },
    ] as TicketClaimsInput[]) {
      const { ticket, claims } = s.seal(input);
      expect(
        s.open(ticket, { sub: input.sub, op: input.op, argsDigest: input.argsDigest }),
      ).toEqual({
        ok: true,
        claims,
        kid: 'k1',
      });
    }
  });

  it('gives every seal a fresh 128-bit nonce and a different ticket for the same claims', () => {
    const s = sealer({ now: () => T * 1000 });
    const nonces = new Set<string>();
    const bodies = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const { ticket, claims } = s.seal(INPUT);
      expect(claims.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Buffer.from(claims.nonce, 'base64url')).toHaveLength(16);
      nonces.add(claims.nonce);
      // The 24-byte AEAD nonce leads the body: 32 base64url characters.
      bodies.add(parts(ticket).body.slice(0, 32));
    }
    expect(nonces.size).toBe(500);
    expect(bodies.size).toBe(500);
  });

  it('overrides n, iat and exp smuggled into the input', () => {
    const s = sealer({ now: () => T * 1000 });
    const smuggled = {
      ...INPUT,
      n: 'chosen-by-caller',
      iat: 1,
      exp: 9_999_999_999,
    } as TicketClaimsInput;
    const { claims } = s.seal(smuggled);
    expect(claims.nonce).not.toBe('chosen-by-caller');
    expect(claims.iat).toBe(T);
    expect(claims.exp).toBe(T + DEFAULT_TTL_SECONDS);
  });

  it('honours ttlSeconds', () => {
    const s = sealer({ now: () => T * 1000, ttlSeconds: 60 });
    expect(s.ttlSeconds).toBe(60);
    expect(s.seal(INPUT).claims.exp).toBe(T + 60);
  });

  it('opens a ticket built independently from the documented format (HKDF, layout, XChaCha20-Poly1305)', () => {
    const n = Uint8Array.from({ length: 16 }, (_, i) => i * 11);
    const fields = {
      nonce: n,
      iat: T,
      exp: T + 300,
      sub: INPUT.sub,
      inputKey: INPUT.inputKey,
      phase: INPUT.phase,
      candidates: INPUT.candidates,
      data: INPUT.data,
    };
    const ticket = handSealed(handPlaintext(fields));
    const s = sealer({ now: () => (T + 100) * 1000 });
    expect(s.open(ticket, BINDING)).toEqual({
      ok: true,
      claims: { ...INPUT, nonce: Buffer.from(n).toString('base64url'), iat: T, exp: T + 300 },
      kid: 'k1',
    });
  });

  it('reports an authentic plaintext that is not the v1 layout as malformed', () => {
    const s = sealer({ now: () => (T + 100) * 1000 });
    const good = handPlaintext({
      nonce: new Uint8Array(16),
      iat: T,
      exp: T + 300,
      sub: INPUT.sub,
      inputKey: 'k',
      phase: 'p',
    });
    const bad: Uint8Array[] = [
      new Uint8Array(0),
      Uint8Array.from([16, ...good.subarray(1)]), // an unknown flag bit
      Uint8Array.from([1, ...good.subarray(1)]), // cand flagged but absent
      Uint8Array.from([2, ...good.subarray(1)]), // app flagged but absent
      good.subarray(0, good.length - 1), // truncated
      good.subarray(0, 10),
      Uint8Array.from([...good, 0]), // a trailing byte
      Uint8Array.from([
        0,
        ...new Uint8Array(16),
        0x80,
        0x80,
        0x80,
        0x80,
        0x80,
        0x80,
        0x80,
        0x80,
        0x01,
      ]), // uint too long
      Uint8Array.from([0, ...new Uint8Array(16), 0x81, 0x00, 0]), // non-minimal uint
      Uint8Array.from([0, ...new Uint8Array(16), 1, 0, 2, 0xc3, 0x28, 0, 0]), // sub not UTF-8
      Uint8Array.from([2, ...good.subarray(1), 3, 0x7b, 0x7b, 0x7b]), // app "{{{" is not JSON
      Uint8Array.from([1, ...good.subarray(1), 0xff, 0x7f]), // a cand count far beyond the bytes
    ];
    for (const plaintext of bad)
      expectFailure(s.open(handSealed(plaintext), BINDING), ['malformed']);
  });

  it('refuses to seal claims it could not carry unchanged, with TypeError', () => {
    const s = sealer();
    const cases: unknown[] = [
      { ...INPUT, sub: 42 },
      { ...INPUT, op: undefined },
      { ...INPUT, argsDigest: null },
      { ...INPUT, inputKey: ['k'] },
      { ...INPUT, phase: undefined },
      { ...INPUT, sub: 'alice\ud800' },
      { ...INPUT, op: '\udc00' },
      { ...INPUT, candidates: 'note-1' },
      { ...INPUT, candidates: ['note-1', 2] },
      { ...INPUT, candidates: ['\ud83d'] },
      { ...INPUT, data: () => 1 },
      { ...INPUT, data: Symbol('x') },
    ];
    for (const input of cases) expect(() => s.seal(input as TicketClaimsInput)).toThrow(TypeError);
    expect(() => s.seal({ ...INPUT, data: 1n } as TicketClaimsInput)).toThrow(TypeError);
    // JSON.stringify escapes a lone surrogate in app (\ud800), so app carries it unchanged.
    const { ticket, claims } = s.seal({ ...INPUT, data: { s: '\ud800' } });
    expect(s.open(ticket, BINDING)).toEqual({ ok: true, claims, kid: 'k1' });
  });

  it('refuses to mint a ticket longer than maxTicketLength, with RangeError: it could never be opened', () => {
    expect(() => sealer().seal({ ...INPUT, data: 'x'.repeat(4000) })).toThrow(RangeError);
    expect(() => sealer({ maxTicketLength: 100 }).seal(INPUT)).toThrow(RangeError);
  });
});

describe('binding to the request', () => {
  it('a different principal is principal; a different op or ad fails the tag (mac)', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    expectFailure(s.open(ticket, { ...BINDING, sub: 'mallory' }), ['principal']);
    expectFailure(s.open(ticket, { ...BINDING, sub: `${BINDING.sub} ` }), ['principal']);
    expectFailure(s.open(ticket, { ...BINDING, sub: '' }), ['principal']);
    expectFailure(s.open(ticket, { ...BINDING, op: 'tools/call:notes_delete2' }), ['mac']);
    expectFailure(s.open(ticket, { ...BINDING, op: 'prompts/get:notes_delete' }), ['mac']);
    expectFailure(
      s.open(ticket, { ...BINDING, argsDigest: `${BINDING.argsDigest.slice(0, -1)}B` }),
      ['mac'],
    );
    expectFailure(s.open(ticket, { ...BINDING, op: BINDING.argsDigest, argsDigest: BINDING.op }), [
      'mac',
    ]);
    expect(s.open(ticket, BINDING).ok).toBe(true);
  });

  it('moving bytes between op and ad does not collide (length-prefixed associated data)', () => {
    const s = sealer();
    const { ticket } = s.seal({ ...INPUT, op: 'ab', argsDigest: 'c' });
    expectFailure(s.open(ticket, { ...BINDING, op: 'a', argsDigest: 'bc' }), ['mac']);
    expect(s.open(ticket, { ...BINDING, op: 'ab', argsDigest: 'c' }).ok).toBe(true);
  });

  it('a binding with a lone surrogate matches no ticket (mac, or principal for sub)', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    expectFailure(s.open(ticket, { ...BINDING, op: `${BINDING.op}\ud800` }), ['mac']);
    expectFailure(s.open(ticket, { ...BINDING, argsDigest: '\udfff' }), ['mac']);
    expectFailure(s.open(ticket, { ...BINDING, sub: `${BINDING.sub}\ud800` }), ['principal']);
  });

  it('checks the principal only on an authentic ticket: a tampered one is mac whoever presents it', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    const last = ticket.at(-2) === 'A' ? 'B' : 'A';
    const tampered = `${ticket.slice(0, -2)}${last}${ticket.at(-1)}`;
    expectFailure(s.open(tampered, { ...BINDING, sub: 'mallory' }), ['mac']);
  });

  it('throws TypeError for a binding that is not three strings (a programming error)', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    for (const binding of [
      undefined,
      null,
      {},
      { ...BINDING, sub: 1 },
      { ...BINDING, argsDigest: undefined },
    ]) {
      expect(() => s.open(ticket, binding as never)).toThrow(TypeError);
    }
  });
});

describe('size limit', () => {
  it('refuses a ticket longer than the default 4096 characters with too_large, before decoding', () => {
    const s = sealer();
    expect(DEFAULT_MAX_TICKET_LENGTH).toBe(4096);
    const { ticket } = s.seal(INPUT);
    const long = `${ticket}${'A'.repeat(4097 - ticket.length)}`;
    expect(long).toHaveLength(4097);
    expectFailure(s.open(long, BINDING), ['too_large']);
    expectFailure(s.open('x'.repeat(100_000), BINDING), ['too_large']);
    expectFailure(s.open('.'.repeat(5000), BINDING), ['too_large']);
    // At exactly the limit the length check passes and the next check decides.
    expectFailure(s.open(`${ticket}${'A'.repeat(4096 - ticket.length)}`, BINDING), [
      'malformed',
      'mac',
    ]);
  });

  it('applies a configured maxTicketLength, to genuine tickets too', () => {
    const { ticket } = sealer().seal(INPUT);
    expect(sealer({ maxTicketLength: ticket.length }).open(ticket, BINDING).ok).toBe(true);
    expectFailure(sealer({ maxTicketLength: ticket.length - 1 }).open(ticket, BINDING), [
      'too_large',
    ]);
  });
});

describe('expiry with an injected clock', () => {
  const T0 = T * 1000; // ms, a whole second
  const exp = T + DEFAULT_TTL_SECONDS;
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
    expect(s.open(ticket, BINDING).ok).toBe(true);
    c.ms = (exp + skew) * 1000 + 999;
    expect(s.open(ticket, BINDING).ok).toBe(true);
    c.ms = (exp + skew + 1) * 1000;
    expectFailure(s.open(ticket, BINDING), ['expired']);
    c.ms = (exp + 10_000) * 1000;
    expectFailure(s.open(ticket, BINDING), ['expired']);
  });

  it('tolerates an issuer clock up to skew seconds ahead, and refuses beyond as not_yet_valid', () => {
    const { c, s, ticket } = sealedAtT0();
    c.ms = (T - skew) * 1000;
    expect(s.open(ticket, BINDING).ok).toBe(true);
    c.ms = (T - skew - 1) * 1000 + 999;
    expectFailure(s.open(ticket, BINDING), ['not_yet_valid']);
    c.ms = (T - 3600) * 1000;
    expectFailure(s.open(ticket, BINDING), ['not_yet_valid']);
  });

  it('uses the configured skew', () => {
    const c = clock(T0);
    const s = sealer({ now: c.now, maxSkewSeconds: 0, ttlSeconds: 10 });
    const { ticket } = s.seal(INPUT);
    c.ms = T0 + 10_999;
    expect(s.open(ticket, BINDING).ok).toBe(true);
    c.ms = T0 + 11_000;
    expectFailure(s.open(ticket, BINDING), ['expired']);
    c.ms = T0 - 1;
    expectFailure(s.open(ticket, BINDING), ['not_yet_valid']);
  });

  it('checks integrity and principal before time', () => {
    const { c, s, ticket } = sealedAtT0();
    c.ms = (exp + skew + 100) * 1000;
    const { body } = parts(ticket);
    const i = 30;
    const flipped = `v1.k1.${body.slice(0, i)}${body[i] === 'A' ? 'B' : 'A'}${body.slice(i + 1)}`;
    expectFailure(s.open(flipped, BINDING), ['mac']);
    expectFailure(s.open(ticket, { ...BINDING, sub: 'mallory' }), ['principal']);
    expectFailure(s.open(ticket, BINDING), ['expired']);
  });

  it('never overflows: an authentic ticket with the largest iat and ttl is refused, not accepted', () => {
    const s = sealer({ now: () => T * 1000 });
    const huge = handPlaintext({
      nonce: new Uint8Array(16),
      iat: 2 ** 52,
      exp: 2 ** 53 - 1,
      sub: INPUT.sub,
      inputKey: 'k',
      phase: 'p',
    });
    expectFailure(s.open(handSealed(huge), BINDING), ['not_yet_valid']);
  });
});

describe('a clock that reads no time (helper-163 L2)', () => {
  it('seals nothing, and opens nothing, expired or not', () => {
    const reading = { ms: T * 1000 };
    const s = new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET_1 }], now: () => reading.ms });
    const { ticket } = s.seal(INPUT);
    reading.ms = Number.NaN;
    expectFailure(s.open(ticket, BINDING), ['not_yet_valid']);
    expect(() => s.seal(INPUT)).toThrow(TicketConfigError);
    reading.ms = -5000;
    expect(() => s.seal(INPUT)).toThrow(/the clock \(now\) read/);
    reading.ms = (T + 7 * 86_400) * 1000;
    expectFailure(s.open(ticket, BINDING), ['expired']);
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
    expect(during.sealKid).toBe('k2');
    expect(during.open(old.ticket, BINDING)).toEqual({ ok: true, claims: old.claims, kid: 'k1' });
    const fresh = during.seal(INPUT);
    expect(parts(fresh.ticket).kid).toBe('k2');
    expect(during.open(fresh.ticket, BINDING)).toEqual({
      ok: true,
      claims: fresh.claims,
      kid: 'k2',
    });
    expectFailure(before.open(fresh.ticket, BINDING), ['kid']);

    const after = new TicketSealer({ keys: [{ kid: 'k2', secret: SECRET_2 }] });
    expectFailure(after.open(old.ticket, BINDING), ['kid']);
    expect(after.open(fresh.ticket, BINDING).ok).toBe(true);
  });

  it('binds the kid: one secret under two kids gives two subkeys, so a relabelled ticket fails the tag', () => {
    const s = new TicketSealer({
      keys: [
        { kid: 'k1', secret: SECRET_1 },
        { kid: 'k2', secret: SECRET_1 },
      ],
    });
    const { ticket } = s.seal(INPUT);
    expectFailure(s.open(ticket.replace(/^v1\.k1\./, 'v1.k2.'), BINDING), ['mac']);
  });

  it('a ticket from another key ring is refused: kid when the id is unknown, mac when it collides', () => {
    const mine = sealer();
    const sameKidOtherSecret = new TicketSealer({ keys: [{ kid: 'k1', secret: `${SECRET_1}!` }] });
    const otherKid = new TicketSealer({ keys: [{ kid: 'prod-2026', secret: SECRET_1 }] });
    expectFailure(mine.open(sameKidOtherSecret.seal(INPUT).ticket, BINDING), ['mac']);
    expectFailure(mine.open(otherKid.seal(INPUT).ticket, BINDING), ['kid']);
    expectFailure(sameKidOtherSecret.open(mine.seal(INPUT).ticket, BINDING), ['mac']);
  });

  it('a string secret and the Uint8Array of its UTF-8 bytes are the same key', () => {
    const a = new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET_1 }] });
    const b = new TicketSealer({
      keys: [{ kid: 'k1', secret: new TextEncoder().encode(SECRET_1) }],
    });
    expect(b.open(a.seal(INPUT).ticket, BINDING).ok).toBe(true);
  });
});

describe('other versions', () => {
  it('a changed version gives version; a wrong shape gives malformed', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    const { kid, body } = parts(ticket);
    for (const v of ['v2', 'V1', 'v0', '', 'v1 ', 'v01'])
      expectFailure(s.open(`${v}.${kid}.${body}`, BINDING), ['version']);
    // A ticket sealed under "v2" associated data is refused by its version, before any decryption.
    expectFailure(s.open(handSealed(new Uint8Array(60), { version: 'v2' }), BINDING), ['version']);
    for (const shape of [
      `${kid}.${body}`,
      `v1.${kid}.${body}.`,
      `v1.${kid}`,
      `v1.${kid}.`,
      '',
      'v1',
      '...',
      'v1.k1.AAAA',
    ]) {
      expectFailure(s.open(shape, BINDING), ['malformed']);
    }
  });

  it('an unknown key id gives kid', () => {
    const s = sealer();
    const { body } = parts(s.seal(INPUT).ticket);
    expectFailure(s.open(`v1.k9.${body}`, BINDING), ['kid']);
    expectFailure(s.open(`v1..${body}`, BINDING), ['kid']);
    expectFailure(s.open(`v1.__proto__.${body}`, BINDING), ['kid']);
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
      expectFailure(s.open(value, BINDING), ['malformed']);
    }
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
      'a secret that is neither string nor bytes',
      () => new TicketSealer({ keys: [{ kid: 'k1', secret: 42 as never }] }),
    ],
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
    // Every confirmation failed: the replay record's expiry was past what a Date holds.
    ['a ttlSeconds of 1e13', () => new TicketSealer({ keys: [good], ttlSeconds: 1e13 })],
    ['a ttlSeconds over one day', () => new TicketSealer({ keys: [good], ttlSeconds: 86_401 })],
    [
      'an infinite ttlSeconds',
      () => new TicketSealer({ keys: [good], ttlSeconds: Number.POSITIVE_INFINITY }),
    ],
    ['a negative maxSkewSeconds', () => new TicketSealer({ keys: [good], maxSkewSeconds: -1 })],
    ['a NaN maxSkewSeconds', () => new TicketSealer({ keys: [good], maxSkewSeconds: Number.NaN })],
    ['a maxSkewSeconds over 300', () => new TicketSealer({ keys: [good], maxSkewSeconds: 301 })],
    [
      'an infinite maxSkewSeconds',
      () => new TicketSealer({ keys: [good], maxSkewSeconds: Number.POSITIVE_INFINITY }),
    ],
    ['a maxTicketLength under 64', () => new TicketSealer({ keys: [good], maxTicketLength: 63 })],
    // helper-163 L2/L3
    ['a key that is null', () => new TicketSealer({ keys: [null as never] })],
    [
      'an ArrayBuffer secret',
      () => new TicketSealer({ keys: [{ kid: 'k1', secret: new ArrayBuffer(64) as never }] }),
    ],
    [
      'a string secret with a lone surrogate',
      () => new TicketSealer({ keys: [{ kid: 'k1', secret: `${'x'.repeat(40)}\ud800` }] }),
    ],
    ['a clock that is no function', () => new TicketSealer({ keys: [good], now: 5 as never })],
  ])('throws TicketConfigError for %s', (_label, make) => {
    expect(make).toThrow(TicketConfigError);
    expect(() => make()).toThrow(expect.objectContaining({ name: 'TicketConfigError' }));
  });

  it('accepts a 32-byte secret, a 32-character kid, every kid character class, and skew 0 and 300', () => {
    expect(
      () => new TicketSealer({ keys: [{ kid: 'a'.repeat(32), secret: new Uint8Array(32) }] }),
    ).not.toThrow();
    expect(
      () => new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET_1 }], maxSkewSeconds: 300 }),
    ).not.toThrow();
    const s = new TicketSealer({ keys: [{ kid: 'Az09_-', secret: SECRET_2 }], maxSkewSeconds: 0 });
    expect(s.open(s.seal(INPUT).ticket, BINDING).ok).toBe(true);
  });

  it('says which rule a configuration broke, and how to make a secret', () => {
    expect(() => new TicketSealer({ keys: [] })).toThrow(
      /keys must list at least one \{ kid, secret \}/,
    );
    expect(() => new TicketSealer({ keys: [{ kid: 'k.1', secret: SECRET_1 }] })).toThrow(
      'invalid key id "k.1": a kid is 1 to 32 characters of A-Z, a-z, 0-9, _ and -',
    );
    expect(() => new TicketSealer({ keys: [{ kid: 'k1', secret: '' }] })).toThrow(
      'master secret for key k1 is 0 bytes; at least 32 random bytes are required (make one with `openssl rand -base64 32`)',
    );
  });

  it('lists the key ids it opens, the sealing one first', () => {
    const s = new TicketSealer({
      keys: [
        { kid: 'k2', secret: SECRET_2 },
        { kid: 'k1', secret: SECRET_1 },
      ],
    });
    expect([s.kids, s.sealKid]).toEqual([['k2', 'k1'], 'k2']);
  });

  it('counts a string secret in UTF-8 bytes', () => {
    expect(() => new TicketSealer({ keys: [{ kid: 'k1', secret: '€'.repeat(11) }] })).not.toThrow(); // 33 bytes
    expect(() => new TicketSealer({ keys: [{ kid: 'k1', secret: '€'.repeat(10) }] })).toThrow(
      TicketConfigError,
    ); // 30 bytes
  });
});

describe('confidentiality', () => {
  it('the ticket carries no plaintext of the claims, not even in base64, and never op or ad at all', () => {
    const s = sealer();
    const { ticket } = s.seal(INPUT);
    const body = Buffer.from(parts(ticket).body, 'base64url');
    for (const secret of [
      INPUT.sub,
      INPUT.op,
      INPUT.argsDigest,
      'note-1',
      'delete_choice',
      'notes_delete',
      'confirm',
    ]) {
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
  });

  it('a ticket that failed returns nothing from inside it, for every reason', () => {
    const s = sealer({ now: () => T * 1000 });
    const { ticket } = s.seal(INPUT);
    const late = sealer({ now: () => (T + 10_000) * 1000 });
    for (const result of [
      s.open(ticket, { ...BINDING, sub: 'mallory' }),
      s.open(ticket, { ...BINDING, argsDigest: 'x' }),
      late.open(ticket, BINDING),
    ]) {
      expect(JSON.stringify(result)).not.toMatch(/note-1|delete_choice|alice|confirm/);
      expect(Object.keys(result).sort()).toEqual(['ok', 'reason']);
    }
  });
});

describe('the associated data a sealer keeps per operation', () => {
  it('binds each of many operations, including long ones and those past the kept count', () => {
    const s = sealer();
    const ops = Array.from({ length: 300 }, (_, i) => `tools/call:op_${i}`);
    ops.push(`tools/call:${'x'.repeat(1000)}`, 'tools/call:é ünïcode');
    for (const op of ops) {
      const { ticket } = s.seal({ ...INPUT, op });
      expect(s.open(ticket, { ...BINDING, op }).ok).toBe(true);
      // A second ticket under the same operation, now that its head may be kept.
      const again = s.seal({ ...INPUT, op }).ticket;
      expect(s.open(again, { ...BINDING, op }).ok).toBe(true);
      expectFailure(s.open(again, { ...BINDING, op: `${op}_` }), ['mac']);
    }
  });

  it('opens what another sealer of the same key sealed, whatever each has kept', () => {
    const a = sealer();
    const b = sealer();
    const warm = a.seal({ ...INPUT, op: 'tools/call:warm' }).ticket;
    expect(a.open(warm, { ...BINDING, op: 'tools/call:warm' }).ok).toBe(true);
    const { ticket } = a.seal(INPUT);
    expect(b.open(ticket, BINDING).ok).toBe(true);
    expectFailure(
      b.open(ticket, {
        ...BINDING,
        argsDigest: `${BINDING.argsDigest.slice(0, -1)}${BINDING.argsDigest.endsWith('A') ? 'B' : 'A'}`,
      }),
      ['mac'],
    );
  });
});
