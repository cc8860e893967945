/**
 * Showing server-supplied text on a terminal. Every character the server sent
 * is shown, but none may act on the terminal or hide from the person: control
 * characters (escape sequences could set the window title, move the cursor
 * and repaint the question), format characters (bidi controls could reorder
 * what the person reads; zero-width characters and the BOM are invisible) and
 * line or paragraph separators are shown as visible `\u{…}` codes instead.
 */

/**
 * The characters that never reach the terminal as they are: every control
 * (`Cc`: C0, DEL and C1) except tab and newline, every format character
 * (`Cf`: U+061C, U+200B, U+200E–U+200F, U+202A–U+202E, U+2060–U+2064,
 * U+2066–U+206F, U+FEFF, tag characters, …) and every other default-ignorable
 * code point (the combining grapheme joiner, Hangul fillers, …), but the
 * zero-width joiner and non-joiner and the variation selectors (the
 * `Variation_Selector` property), the line and
 * paragraph separators (`Zl`, `Zp`: U+2028, U+2029), and lone surrogates
 * (`Cs`), which no terminal can show. U+200C, U+200D and the variation
 * selectors stay in text shown: Persian, Indic scripts and emoji (👩‍💻, ❤️)
 * need them to read right, and none reorders text; {@link plain} refuses
 * them in a value to pre-fill.
 */
const UNSAFE =
  /(?![\t\n]|\u200c|\u200d|\p{Variation_Selector})[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * What a value to pre-fill must not hold besides what {@link oneLine}
 * escapes: any default-ignorable code point (joiners and variation selectors
 * included: invisible where they join nothing), a space other than U+0020,
 * the braille blank, or a combining mark with no letter before it.
 */
const UNSEEN = /[\p{Default_Ignorable_Code_Point}\u2800]|(?! )\p{Zs}|^\p{M}/u;

/**
 * Server text (a message) for display: every character kept, line breaks
 * kept, control, format and separator characters made visible as `\u{1b}`,
 * `\u{202e}`, `\u{2028}` etc.
 */
export function visible(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`);
}

/** Server text that must stay on one line (a title, a label, a value): {@link visible}, with line breaks shown as `\n`. */
export function oneLine(text: string): string {
  return visible(text).replace(/\n/g, '\\n').replace(/\t/g, ' ');
}

/**
 * Whether `text` shows on one line exactly as it is ({@link oneLine} leaves it
 * unchanged) and holds nothing that shows as nothing, or as something else:
 * no control, format, default-ignorable or separator character, no space but
 * U+0020, no line break or tab, no leading combining mark. Only such a value
 * may be pre-filled into a prompt, where the person would otherwise send
 * characters they could not see.
 */
export function plain(text: string): boolean {
  return oneLine(text) === text && !UNSEEN.test(text);
}

/** A value as the review screen shows it. */
export function showValue(value: unknown): string {
  if (value === undefined) return '(no answer)';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value))
    return value.length === 0 ? '(none)' : value.map((v) => oneLine(String(v))).join(', ');
  return oneLine(String(value));
}
