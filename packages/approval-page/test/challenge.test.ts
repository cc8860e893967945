/** The WebAuthn challenge of an approval: what it commits to, and nothing else. */
import { createHash } from 'node:crypto';
import { digestJson } from '@mrtr/digest';
import { describe, expect, it } from 'vitest';
import {
  approvalChallenge,
  CHALLENGE_DOMAIN,
  type ChallengeInput,
  newRandom,
  userHandle,
} from '../src/index.js';

const input: ChallengeInput = {
  id: 'q3Yx0fM2b7Zr9KcW1nT4vA',
  nonce: 'nonce-1',
  principal: 'alice',
  operation: 'tools/call:delete_service',
  argumentsDigest: 'sha256:args',
  questionDigest: 'sha256:question',
  content: {},
  random: 'A'.repeat(43),
};

describe('approvalChallenge', () => {
  it('is SHA-256 over the domain and the RFC 8785 form of the approval, as 43 base64url characters', () => {
    // Written out by hand: keys in code-unit order, no whitespace (RFC 8785 §3.2.3).
    const canonical =
      '{"argumentsDigest":"sha256:args","content":{},"id":"q3Yx0fM2b7Zr9KcW1nT4vA","nonce":"nonce-1",' +
      `"operation":"tools/call:delete_service","principal":"alice","questionDigest":"sha256:question","random":"${'A'.repeat(43)}","v":1}`;
    const expected = createHash('sha256')
      .update(Buffer.from('mrtr-approval-page/webauthn-challenge/v1\0', 'latin1'))
      .update(canonical, 'utf8')
      .digest('base64url');
    expect(CHALLENGE_DOMAIN).toBe('mrtr-approval-page/webauthn-challenge/v1\0');
    expect(approvalChallenge(input)).toBe(expected);
    expect(approvalChallenge(input)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it.each([
    ['id', { id: 'q3Yx0fM2b7Zr9KcW1nT4vB' }],
    ['nonce', { nonce: 'nonce-2' }],
    ['principal', { principal: 'bob' }],
    ['operation', { operation: 'tools/call:delete_volume' }],
    ['argumentsDigest', { argumentsDigest: 'sha256:other-args' }],
    ['questionDigest', { questionDigest: 'sha256:other-question' }],
    ['content', { content: { note_id: 'note-2' } }],
    ['random', { random: 'B'.repeat(43) }],
  ])('changes with the %s', (_, change) => {
    expect(approvalChallenge({ ...input, ...change })).not.toBe(approvalChallenge(input));
  });

  it('does not depend on key order, and is never the digest of the same data for another purpose', () => {
    const content = { b: 'x', a: ['1', '2'] };
    const reordered = { a: ['1', '2'], b: 'x' };
    expect(approvalChallenge({ ...input, content })).toBe(
      approvalChallenge({ ...input, content: reordered }),
    );
    const { content: _c, random: _r, ...rest } = input;
    const same = { v: 1, ...rest, content: input.content, random: input.random };
    expect(`sha256:${approvalChallenge(input)}`).not.toBe(digestJson(same));
  });

  it('refuses a random that is not 32 bytes of base64url, and content that is not JSON data', () => {
    for (const random of ['', 'short', `${'A'.repeat(42)}=`, 'A'.repeat(44), 42])
      expect(() => approvalChallenge({ ...input, random } as never)).toThrow(TypeError);
    expect(() =>
      approvalChallenge({ ...input, content: { n: Number.POSITIVE_INFINITY } as never }),
    ).toThrow();
  });

  it('draws a fresh random each time', () => {
    const randoms = new Set(Array.from({ length: 64 }, newRandom));
    expect(randoms.size).toBe(64);
    for (const r of randoms) expect(r).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('userHandle', () => {
  it('is 32 stable bytes per principal that do not spell the principal', () => {
    const alice = userHandle('alice');
    expect(alice).toHaveLength(32);
    expect(Buffer.from(userHandle('alice')).equals(Buffer.from(alice))).toBe(true);
    expect(Buffer.from(userHandle('bob')).equals(Buffer.from(alice))).toBe(false);
    expect(Buffer.from(alice).includes(Buffer.from('alice'))).toBe(false);
  });
});
