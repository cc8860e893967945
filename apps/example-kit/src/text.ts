import { hasStrayJoiner } from '@mrtr/wire';
import { z } from 'zod';

/**
 * A string argument PostgreSQL can store exactly: at most `max` characters
 * (UTF-16 code units; at least `min`, default 1), without U+0000 (a `text`
 * column refuses it) and without lone surrogates (UTF-8 would store them as
 * U+FFFD, so the row would not hold what was sent). Refused up front with
 * `-32602` naming the argument, never an HTTP 500 from the database.
 */
export function storableText(max: number, min = 1) {
  return (
    z
      .string()
      .min(min)
      // Too long: no later check reads it (a 4 MiB string through every pattern below held the loop).
      .max(max, { abort: true })
      .refine((s) => !s.includes('\u0000'), 'must not contain U+0000 (NUL)')
      .refine((s) => s.isWellFormed(), 'must be well-formed Unicode (no lone surrogates)')
  );
}

/**
 * A one-line name or label ({@link storableText}, and no control character,
 * line or paragraph separator, or format character (bidi controls, tag
 * characters, zero-width spaces; ZWJ, ZWNJ and variation selectors only
 * where they join something, see `STRAY_JOINER` of `@mrtr/wire`), nor more than 4
 * combining marks in a row, nor white space alone): text that a confirmation
 * question quotes, so that whoever stored it cannot add lines that read as
 * the server's, or reorder what the person reads (Trojan Source,
 * CVE-2021-42574). Refused with `-32602` naming the argument.
 */
export function singleLineText(max: number, min = 1) {
  return (
    storableText(max, min)
      .refine(
        // Format characters (bidi controls, tags, zero-width and annotation marks) draw nothing or
        // reorder what is read; only the joiners emoji need are kept.
        // Default-ignorable code points (Hangul fillers, …) draw nothing either, as the blank braille
        // pattern; the joiners and variation selectors emoji need are kept.
        // Private-use and unassigned code points may draw as nothing in a client's font.
        (s) =>
          !/(?![\ufe00-\ufe0f]|\u034f|\u200c|\u200d)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800]/u.test(
            s,
          ),
        'must be one line without control, bidi, private-use, unassigned or other invisible format characters',
      )
      .refine((s) => !stacksMarks(s), 'must not stack more than 4 combining marks on one character')
      // A joiner that joins nothing draws nothing: `api\u200d-staging` would read as `api-staging`.
      .refine(
        (s) => !hasStrayJoiner(s),
        'must not hold a joiner or variation selector that joins nothing (only emoji and joining scripts use them)',
      )
      // Quoted, a name of spaces (U+3000, NBSP, …) still shows as nothing to tell it apart.
      .refine((s) => /[^\p{White_Space}]/u.test(s), 'must hold a character other than white space')
  );
}

/**
 * Whether `text` stacks more than 4 combining marks on one character: a
 * stack draws over the lines around it, and no script needs five in a row.
 * Joiners between the marks (ZWJ, ZWNJ, CGJ) draw nothing and do not break
 * the stack. For input checks of text a question will quote.
 */
export function stacksMarks(text: string): boolean {
  return /\p{M}(?:[\u034f\u200c\u200d]*\p{M}){4}/u.test(text);
}
