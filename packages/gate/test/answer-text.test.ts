import { canonicalize } from '@mrtr/digest';
import { describe, expect, it } from 'vitest';
import { acceptedAnswerText } from '../src/perform.js';

describe('the answer text the replay store binds', () => {
  const contents: unknown[] = [
    {},
    { confirm: true, record_id: 'rec-03' },
    { z: 1, a: [1, 2.5, -0, 1e21], é: 'line\nbreak "quoted" \\ \u0001', '': null },
    { nested: { b: { c: 'ü😀' }, a: false } },
  ];

  it('is the RFC 8785 text of {action, approval?, content} for every content', () => {
    for (const content of contents) {
      const text = canonicalize(content);
      expect(acceptedAnswerText(undefined, text)).toBe(canonicalize({ content, action: 'accept' }));
      const approval = 'AAAAAAAAAAAAAAAAAAAA_-';
      expect(acceptedAnswerText(approval, text)).toBe(
        canonicalize({ content, approval, action: 'accept' }),
      );
    }
  });

  it('differs for another content or approval', () => {
    const a = acceptedAnswerText(undefined, canonicalize({ confirm: true }));
    expect(acceptedAnswerText(undefined, canonicalize({ confirm: false }))).not.toBe(a);
    expect(acceptedAnswerText('AAAAAAAAAAAAAAAAAAAAAA', canonicalize({ confirm: true }))).not.toBe(
      a,
    );
  });
});
