/**
 * Showing server-supplied text on a terminal. Every character the server sent
 * is shown, but none may act on the terminal or hide from the person: control
 * characters (escape sequences could set the window title, move the cursor
 * and repaint the question), format characters (bidi controls could reorder
 * what the person reads; zero-width characters and the BOM are invisible),
 * line or paragraph separators, and private-use and unassigned code points
 * (a blank, a box or an icon, by font) are shown as visible `\u{…}` codes
 * instead.
 */
import { clip, STRAY_JOINER } from '@mrtr/wire';
import fastStringWidth from 'fast-string-width';

/**
 * The characters that never reach the terminal as they are: every control
 * (`Cc`: C0, DEL and C1) except tab and newline, every format character
 * (`Cf`: U+061C, U+200B, U+200E–U+200F, U+202A–U+202E, U+2060–U+2064,
 * U+2066–U+206F, U+FEFF, tag characters, …) and every other default-ignorable
 * code point (the combining grapheme joiner, Hangul fillers, the variation
 * selectors from U+E0100 and Mongolian's, …), but the zero-width joiner and
 * non-joiner and the variation selectors U+FE00–U+FE0F, the line and
 * paragraph separators (`Zl`, `Zp`: U+2028, U+2029), lone surrogates
 * (`Cs`), which no terminal can show, and private-use (`Co`: U+E000–U+F8FF,
 * planes 15 and 16) and unassigned code points (`Cn`, as of the Unicode
 * version of Node's ICU; noncharacters such as U+FFFF included), which one
 * font draws as a blank, another as a box or an icon, and the blank braille
 * pattern U+2800 and the null notehead U+1D159, drawn as a space that is none: the person cannot tell
 * what was sent. U+200C, U+200D and U+FE00–U+FE0F stay
 * in text shown where they join something: Persian, Indic scripts and emoji
 * (👩‍💻, ❤️) need them to read right, and none reorders text; where they join
 * nothing (`STRAY_JOINER` of `@mrtr/wire`) they are codes too. {@link plain}
 * refuses them in a value to pre-fill.
 */
const UNSAFE =
  /(?![\t\n]|\u200c|\u200d|[\ufe00-\ufe0f])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800\u{1d159}]/gu;

/**
 * What a value to pre-fill must not hold besides what {@link oneLine}
 * escapes: any default-ignorable code point (joiners and variation selectors
 * included: invisible where they join nothing), a space other than U+0020,
 * the braille blank, or a combining mark with no letter before it.
 */
const UNSEEN = /[\p{Default_Ignorable_Code_Point}\u2800]|(?! )\p{Zs}|^\p{M}/u;

/**
 * Server text (a message) for display: every character kept, line breaks
 * kept, control, format, separator, private-use and unassigned characters
 * made visible as `\u{1b}`, `\u{202e}`, `\u{2028}`, `\u{e000}` etc.
 */
export function visible(text: string): string {
  // A joiner or variation selector that joins nothing draws nothing: shown as its code too. Looked
  // for once the other codes are written: a joiner next to one (`\u{61c}`) joins nothing either.
  return capMarkStacks(text.replace(UNSAFE, code).replace(STRAY_JOINER, code));
}

/** A character as its code point, `\u{202e}`. */
const code = (c: string) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`;

/**
 * Most combining marks in a row {@link visible} leaves to the terminal
 * (Vietnamese stacks two, pointed Hebrew three or four); the rest are codes:
 * a stack of a hundred draws over the lines above and below, the header
 * that names who asks among them. Joiners between marks neither end the row
 * nor count in it, as the gate's previews and the example servers'
 * `stacksMarks` count them.
 */
export const MAX_STACKED_MARKS = 4;
const MARK = /^\p{M}$/u;
const JOINER = /^[\u034f\u200c\u200d]$/u;

/**
 * `text` with every combining mark past the {@link MAX_STACKED_MARKS}th in
 * a row shown as its code. A loop, not a pattern: `\p{M}{5,}` overflowed
 * V8's backtracking stack on a run of four million marks (an 8 MB message).
 */
function capMarkStacks(text: string): string {
  // Most text holds no mark at all: nothing to do.
  if (!/\p{M}/u.test(text)) return text;
  let out = '';
  let run = 0;
  for (const point of text) {
    if (JOINER.test(point)) {
      out += point;
      continue;
    }
    if (!MARK.test(point)) {
      run = 0;
      out += point;
    } else if (++run > MAX_STACKED_MARKS) out += code(point);
    else out += point;
  }
  return out;
}

/** Server text that must stay on one line (a title, a label, a value): {@link visible}, with line breaks shown as `\n`. */
export function oneLine(text: string): string {
  return visible(text).replace(/\n/g, '\\n').replace(/\t/g, ' ');
}

/** Most characters of a server's name {@link serverName} shows. */
export const MAX_NAME_CHARS = 60;

/**
 * A server's self-reported name (`serverInfo.name` or `title`) as shown in a
 * question's header, where it must not pose as the rest of the header: in
 * double quotes, escaped by {@link oneLine} and with its own `"` shown as
 * `\u{22}` (so `Bank" at https://…` cannot close the quote and name another URL),
 * runs of spaces collapsed to one (so padding cannot push the real URL off
 * the line), and cut to {@link MAX_NAME_CHARS} characters then `…`.
 */
export function serverName(name: string): string {
  const one = oneLine(name)
    .replace(/"/g, '\\u{22}')
    .replace(/\p{Zs}+/gu, ' ')
    .trim();
  return `"${clip(one, MAX_NAME_CHARS)}"`;
}

/** Most lines of a server's message {@link shownMessage} shows. */
export const MAX_MESSAGE_LINES = 24;
/** Most characters of a server's message {@link shownMessage} shows. */
export const MAX_MESSAGE_CHARS = 2000;

/**
 * A server's message (a question, what was declined) as shown: {@link visible},
 * runs of blank lines collapsed to one, leading and trailing blank lines
 * dropped, and at most {@link MAX_MESSAGE_LINES} lines and
 * {@link MAX_MESSAGE_CHARS} characters, then a note `(… N more lines not
 * shown)`. A message cannot push the header that names who asks off the
 * screen, nor paint a header of its own below a screenful of blank lines.
 */
export function shownMessage(text: string): string {
  // What can be shown lies in a head of the text, after any blank lines it starts with (padding
  // must not push the question out of the head): the rest is not read (a 16 MiB message).
  const { head, rest } = headOf(text.slice(firstLineShown(text)), 64 * MAX_MESSAGE_CHARS);
  const lines: string[] = [];
  for (const line of visible(head).split('\n')) {
    const blank = line.trim() === '';
    if (blank && (lines.length === 0 || (lines.at(-1) as string).trim() === '')) continue;
    lines.push(line);
  }
  while (lines.length > 0 && (lines.at(-1) as string).trim() === '') lines.pop();
  const shown: string[] = [];
  let chars = 0;
  for (const line of lines) {
    if (shown.length === MAX_MESSAGE_LINES || chars >= MAX_MESSAGE_CHARS) break;
    shown.push(clip(line, MAX_MESSAGE_CHARS - chars));
    chars += line.length + 1;
  }
  const more = lines.length - shown.length;
  const cut = more > 0 || chars - 1 > MAX_MESSAGE_CHARS || rest > 0;
  if (!cut) return shown.join('\n');
  const note =
    more > 0 && rest === 0
      ? `(… ${more} more ${more === 1 ? 'line' : 'lines'} not shown)`
      : '(… the rest is not shown)';
  return [...shown, note].join('\n');
}

/** Most terminal columns of a field's title, a choice's label or a value in a hint {@link shownLabel} and {@link bounded} show. */
export const MAX_LABEL_COLUMNS = 120;
/** Most terminal columns of a field's description (or a long value in a note) {@link shownLabel} and {@link bounded} show. */
export const MAX_DESCRIPTION_COLUMNS = 500;
/**
 * Longest URL, in characters as {@link oneLine} shows it, that a URL-mode
 * question may send: mrtr shows a URL whole or not at all, so the person
 * never opens more than they read; a longer one is declined without asking.
 */
export const MAX_URL_CHARS = 2048;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * Text already made safe ({@link oneLine}, {@link showValue}) cut to `max`
 * terminal columns (a wide CJK character or an emoji takes two, as the
 * terminal draws it), between characters as a person sees them (grapheme
 * clusters: 👩‍💻 is kept or cut whole), then `… (N more characters not
 * shown)`; text that fits as it is. N counts grapheme clusters in the part
 * read, and code points past it: only the first `4 × max + 64` UTF-16 units
 * are split into clusters, since V8's `Intl.Segmenter` takes time that
 * grows with the square of the text's length (3 s for 100,000 characters).
 * A label cut in UTF-16 units took two lines of the screen per label in CJK text.
 * `unread`: code points of the text that its caller did not read at all
 * ({@link bounded}, {@link shownLabel}), added to N; with any, the note is shown.
 */
export function cut(shown: string, max: number, unread = 0): string {
  const note = (more: number) =>
    ` (${more} more ${more === 1 ? 'character' : 'characters'} not shown)`;
  // No character is wider than two columns: text of at most max / 2 units fits.
  if (shown.length * 2 <= max) return unread > 0 ? `${shown}…${note(unread)}` : shown;
  // Read a head; its last character may go on past it, so it is not taken as whole.
  const { head, rest } = headOf(shown, 4 * max + 64);
  const parts = Array.from(graphemes.segment(head), (s) => s.segment);
  const cutShort = rest > 0 ? (parts.pop() ?? '') : '';
  let width = 0;
  let kept = '';
  let taken = 0;
  for (const segment of parts) {
    const w = fastStringWidth(segment);
    if (width + w > max - 1) {
      // The last character fits in the column kept for `…` when nothing follows it.
      if (
        unread === 0 &&
        taken === parts.length - 1 &&
        kept.length + segment.length === shown.length &&
        width + w <= max
      )
        return shown;
      break;
    }
    width += w;
    kept += segment;
    taken++;
  }
  if (kept.length === shown.length && unread === 0) return shown;
  // Characters read but not kept, then code points past them, and what the caller left unread.
  let more = parts.length - taken + rest + unread;
  for (const _ of cutShort) more++;
  return `${kept}…${note(more)}`;
}

/**
 * A server's value (a choice's value, a default) on one line and bounded:
 * {@link oneLine}, at most `max` columns (default {@link MAX_LABEL_COLUMNS}),
 * then a note saying how many more there were. Spaces are kept as they are:
 * it stands for what is sent.
 */
export function bounded(text: string, max = MAX_LABEL_COLUMNS): string {
  const { head, rest } = headOf(text, 32 * max + 64);
  return unblank(cut(oneLine(head), max, rest));
}

/**
 * The first `units` UTF-16 units of `text` (never ending inside a surrogate
 * pair), and how many code points follow them: what a bounded display reads,
 * so that escaping and the patterns of {@link visible} run on no more than
 * can be shown. A column takes at least one unit of the text but for
 * characters drawn together (an emoji sequence, four marks): 32 units a
 * column are more than any shown text needs.
 */
export function headOf(text: string, units: number): { head: string; rest: number } {
  if (text.length <= units) return { head: text, rest: 0 };
  let end = units;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  let rest = 0;
  for (let i = end; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const before = text.charCodeAt(i - 1);
    // A low surrogate after a high one ends a pair already counted.
    if (i > end && unit >= 0xdc00 && unit <= 0xdfff && before >= 0xd800 && before <= 0xdbff)
      continue;
    rest++;
  }
  return { head: text.slice(0, end), rest };
}

/**
 * A field's title or description, a choice's label, as a form shows it, in
 * the spirit of {@link shownMessage}: {@link oneLine}, runs of spaces
 * collapsed to one (padding cannot start a line that looks like a header of
 * its own), at most `max` columns (default {@link MAX_LABEL_COLUMNS}; use
 * {@link MAX_DESCRIPTION_COLUMNS} for a description), then `… (N more
 * characters not shown)`. A label cannot push the header that names who asks
 * off the screen.
 */
export function shownLabel(text: string, max = MAX_LABEL_COLUMNS): string {
  // Runs of spaces collapsed over the whole text first: padding must not push what tells two
  // labels apart out of the head read.
  const units = 32 * max + 64;
  const { head, rest } = headOf(collapseSpaces(text, units), units);
  return unblank(cut(oneLine(head), max, rest));
}

/**
 * Whether text as shown holds a character that draws on its own: anything
 * but white space, combining marks, and the Hangul vowel and final jamo
 * (U+1160–U+11FF, U+D7B0–U+D7FF), which draw over the character before them
 * (a mark with no letter before it draws on the space before the label, or
 * nothing).
 */
const showsSomething = (shown: string) => /[^\s\p{M}\u1160-\u11ff\ud7b0-\ud7ff]/u.test(shown);

/**
 * Text shown as it is, unless it shows nothing: `""` for empty text, and
 * spaces and combining marks as their codes (`\u{20}\u{301}`) when there is
 * nothing else, as {@link visible} shows what a terminal draws as nothing.
 */
const unblank = (shown: string) =>
  showsSomething(shown) ? shown : shown === '' ? '""' : shown.replace(/./gsu, code);

/**
 * The label of form field `name`: its `title`, unless that shows nothing of
 * its own (`""`, spaces, combining marks alone, or characters {@link oneLine}
 * leaves blank), then the field's name: a field the person cannot tell from
 * a blank must not be answered as one.
 */
export function titleOf(name: string, field: { title?: string }): string {
  return field.title !== undefined && showsSomething(oneLine(field.title)) ? field.title : name;
}

/** Whether a UTF-16 unit is a tab (shown as a space) or a space separator (`Zs`: U+0020, U+00A0, U+1680, U+2000–U+200A, U+202F, U+205F, U+3000). */
function isSpace(unit: number): boolean {
  return (
    unit === 0x09 ||
    unit === 0x20 ||
    unit === 0xa0 ||
    unit === 0x1680 ||
    (unit >= 0x2000 && unit <= 0x200a) ||
    unit === 0x202f ||
    unit === 0x205f ||
    unit === 0x3000
  );
}

/**
 * `text` with each run of two or more spaces (`Zs`, tabs) as one U+0020, up
 * to `enough` units of output (the rest as it is: only a head is shown). A
 * loop, linear at any length.
 */
function collapseSpaces(text: string, enough: number): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length && out.length <= enough; i++) {
    if (!isSpace(text.charCodeAt(i)) || !isSpace(text.charCodeAt(i + 1))) continue;
    let end = i + 2;
    while (end < text.length && isSpace(text.charCodeAt(end))) end++;
    out += `${text.slice(from, i)} `;
    from = end;
    i = end - 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Where the first line of `text` that is not blank (spaces and tabs only) starts: a loop, linear. */
function firstLineShown(text: string): number {
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0x0a) lineStart = i + 1;
    else if (unit !== 0x20 && unit !== 0x09 && unit !== 0x0d) return lineStart;
  }
  return lineStart;
}

/**
 * Whether `text` shows on one line exactly as it is ({@link oneLine} leaves it
 * unchanged) and holds nothing that shows as nothing, or as something else:
 * no control, format, default-ignorable, separator, private-use or
 * unassigned character, no space but
 * U+0020, no line break or tab, no leading combining mark. Only such a value
 * may be pre-filled into a prompt, where the person would otherwise send
 * characters they could not see.
 */
export function plain(text: string): boolean {
  return oneLine(text) === text && !UNSEEN.test(text);
}

/** Marks that read as a double quote (primes, curly and full-width quotes, gershayim, ditto). */
const LOOKALIKE_QUOTES =
  /["\u00a8\u02ba\u02dd\u02ee\u02f5\u02f6\u05f4\u201c-\u201f\u2033\u2034\u2036\u2057\u275d\u275e\u2e42\u3003\u301d-\u301f\uff02\u{1f676}-\u{1f678}]/gu;

/**
 * A choice as shown, in double quotes, so that one choice holding `, ` never
 * reads as two: its own `"` and every mark that reads as one (`ʺ`, `″`, `˶`,
 * `＂`, curly quotes) as their codes, `\u{22}`, as {@link visible} shows
 * what must not pass for something else (its codes are not escaped again).
 */
export function quotedChoice(shown: string): string {
  return `"${shown.replace(LOOKALIKE_QUOTES, code)}"`;
}

/** A value as the review screen shows it; each choice of a multi-select {@link quotedChoice}. */
export function showValue(value: unknown): string {
  if (value === undefined) return '(no answer)';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value))
    return value.length === 0
      ? '(none)'
      : value.map((v) => quotedChoice(oneLine(String(v)))).join(', ');
  return oneLine(String(value));
}
