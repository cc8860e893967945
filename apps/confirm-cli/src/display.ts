/**
 * Showing server-supplied text on a terminal. Every character the server sent
 * is shown, but none may act on the terminal: control characters (escape
 * sequences could move the cursor and repaint the question) and bidirectional
 * overrides (which could reorder what the person reads) are shown as visible
 * `\u{…}` codes instead.
 */

/** C0 (except tab and newline), DEL, C1, and the Unicode bidi controls. */
function unsafe(code: number): boolean {
  return (
    (code < 0x20 && code !== 0x09 && code !== 0x0a) ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/**
 * Server text (a message) for display: every character kept, line breaks
 * kept, control and bidi-control characters made visible as `\u{1b}` etc.
 */
export function visible(text: string): string {
  let out = '';
  for (const c of text) {
    const code = c.codePointAt(0) as number;
    out += unsafe(code) ? `\\u{${code.toString(16)}}` : c;
  }
  return out;
}

/** Server text that must stay on one line (a title, a label, a value): {@link visible}, with line breaks shown as `\n`. */
export function oneLine(text: string): string {
  return visible(text)
    .replace(/\r?\n|\r/g, '\\n')
    .replace(/\t/g, ' ');
}

/** A value as the review screen shows it. */
export function showValue(value: unknown): string {
  if (value === undefined) return '(no answer)';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value))
    return value.length === 0 ? '(none)' : value.map((v) => oneLine(String(v))).join(', ');
  return oneLine(String(value));
}
