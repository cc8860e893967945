import { clip } from '@mrtr/wire';

/**
 * Longest text a record carries of what the client says of itself (its
 * `clientInfo` name, version and title) and of a string JSON-RPC id, in
 * UTF-16 code units; longer text is cut, with `…`.
 */
export const MAX_RECORDED_TEXT = 256;

/**
 * `value` as a record keeps text a caller chose: well-formed, a lone
 * surrogate and U+0000 each becoming U+FFFD (so a JSON or PostgreSQL `jsonb`
 * sink, which refuses `\u0000`, can write it), and at most
 * {@link MAX_RECORDED_TEXT} code units, cut between code points, with `…`
 * when cut: a record must not grow with what a caller chose to send.
 */
export function recordedText(value: string): string {
  const text = storable(value);
  // `…` counts: at most MAX_RECORDED_TEXT units in all.
  return text.length <= MAX_RECORDED_TEXT ? text : clip(text, MAX_RECORDED_TEXT - 1);
}

/** `value` well-formed and without U+0000: each lone surrogate and NUL becomes U+FFFD. */
export function storable(value: string): string {
  const text = value.toWellFormed();
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\ufffd') : text;
}
