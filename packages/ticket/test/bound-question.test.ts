import { describe, expect, it } from 'vitest';
import { MAX_SKEW_SECONDS, TicketSealer } from '../src/index.js';
import { BINDING, handPlaintext, handSealed, SECRET_1 } from './helpers.js';

const T = 1_800_000_000; // Unix seconds
const QUESTION = 'sha256:3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE';
const APPROVAL = 'AAECAwQFBgcICQoLDA0ODw';

const sealer = (options: { maxSkewSeconds?: number } = {}) =>
  new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET_1 }], now: () => T * 1000, ...options });

const claims = {
  sub: BINDING.sub,
  op: BINDING.op,
  argsDigest: BINDING.argsDigest,
  inputKey: 'confirm_delete',
  phase: 'confirm',
};

describe('questionDigest and approvalId', () => {
  it('seal both as raw bytes and open them back as the strings sealed', () => {
    const s = sealer();
    const { ticket, claims: sealed } = s.seal({
      ...claims,
      questionDigest: QUESTION,
      approvalId: APPROVAL,
    });
    const opened = s.open(ticket, BINDING);
    expect(opened).toEqual({ ok: true, claims: sealed, kid: 'k1' });
    expect(sealed.questionDigest).toBe(QUESTION);
    expect(sealed.approvalId).toBe(APPROVAL);
  });

  it('keep the form ticket under 200 characters whatever the question showed (a URL one adds 16 bytes)', () => {
    const s = sealer();
    const form = s.seal({ ...claims, questionDigest: QUESTION }).ticket;
    const url = s.seal({ ...claims, questionDigest: QUESTION, approvalId: APPROVAL }).ticket;
    expect(form.length).toBeLessThanOrEqual(200);
    expect(url.length - form.length).toBeGreaterThanOrEqual(21);
    expect(url.length - form.length).toBeLessThanOrEqual(22);
  });

  it('open a ticket laid out by hand with both fields, in the documented order', () => {
    const nonce = Uint8Array.from({ length: 16 }, (_, i) => i);
    const question = Buffer.from(QUESTION.slice('sha256:'.length), 'base64url');
    const approval = Buffer.from(APPROVAL, 'base64url');
    const ticket = handSealed(
      handPlaintext({
        nonce,
        iat: T,
        exp: T + 300,
        sub: claims.sub,
        inputKey: claims.inputKey,
        phase: claims.phase,
        question,
        approval,
      }),
    );
    const opened = sealer().open(ticket, BINDING);
    expect(opened.ok && opened.claims.questionDigest).toBe(QUESTION);
    expect(opened.ok && opened.claims.approvalId).toBe(APPROVAL);
  });

  it.each([
    ['not a digest', 'sha256:short'],
    ['another algorithm', `sha512:${'A'.repeat(43)}`],
    ['non-canonical base64url', `sha256:${'A'.repeat(42)}B`],
  ])('refuse a questionDigest that is %s', (_what, questionDigest) => {
    expect(() => sealer().seal({ ...claims, questionDigest })).toThrow(TypeError);
  });

  it.each([
    ['too short', 'AAEC'],
    ['not base64url', `${'A'.repeat(21)}+`],
    ['non-canonical', `${'A'.repeat(21)}B`],
  ])('refuse an approvalId that is %s', (_what, approvalId) => {
    expect(() => sealer().seal({ ...claims, approvalId })).toThrow(TypeError);
  });
});

describe('acceptedUntil', () => {
  it('is the first millisecond at which open refuses: the end of second exp plus the skew', () => {
    for (const maxSkewSeconds of [0, 30, MAX_SKEW_SECONDS]) {
      const minting = sealer({ maxSkewSeconds });
      const { ticket, claims: sealed } = minting.seal(claims);
      const until = minting.acceptedUntil(sealed);
      expect(until).toBe((sealed.exp + maxSkewSeconds + 1) * 1000);
      const at = (ms: number) =>
        new TicketSealer({
          keys: [{ kid: 'k1', secret: SECRET_1 }],
          maxSkewSeconds,
          now: () => ms,
        }).open(ticket, BINDING);
      // Every millisecond before it opens (a replay record must outlive them all), none from it on.
      for (const before of [1000, 500, 1]) expect(at(until - before).ok).toBe(true);
      expect(at(until)).toEqual({ ok: false, reason: 'expired' });
      expect(at(until + 1000)).toEqual({ ok: false, reason: 'expired' });
    }
  });
});
