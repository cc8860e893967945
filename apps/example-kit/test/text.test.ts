/**
 * The argument checks of the example servers: a string over its length
 * limit is refused by that limit alone, before any pattern reads it, so a
 * client cannot make the server scan megabytes it will refuse anyway.
 */
import { describe, expect, it } from 'vitest';
import { singleLineText, stacksMarks, storableText } from '../src/text.js';

describe('storableText and singleLineText', () => {
  it('refuse a string over the limit with that issue alone: no later check reads it', () => {
    for (const schema of [storableText(5), singleLineText(5)]) {
      const result = schema.safeParse('a\u0000\u200d\u0301\u0301\u0301\u0301\u0301b');
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((i) => i.code)).toEqual(['too_big']);
    }
  });

  it('within the limit, every check still runs', () => {
    const result = singleLineText(50).safeParse('a\u0000\u200d-b');
    expect(result.error?.issues.map((i) => i.message)).toEqual([
      'must not contain U+0000 (NUL)',
      'must be one line without control, bidi, private-use, unassigned or other invisible format characters',
      'must not hold a joiner or variation selector that joins nothing (only emoji and joining scripts use them)',
    ]);
    expect(singleLineText(50).safeParse('notes 👩\u200d💻').success).toBe(true);
    // A font may draw a private-use or unassigned code point as nothing: `prod-db` twins.
    for (const name of ['prod\ue000-db', 'prod\u{f0000}-db', 'prod\u0378-db', 'prod\ufffe-db'])
      expect(singleLineText(50).safeParse(name).success).toBe(false);
    expect(stacksMarks('e\u0301\u0301\u0301\u0301\u0301')).toBe(true);
  });
});
