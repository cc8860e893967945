/**
 * The nesting depth of a JSON text, read without parsing it: the official
 * SDK validates a request with recursive schemas (zod), which overflow the
 * call stack on a body nested a few thousand levels deep, so such a body is
 * refused before the SDK reads it.
 */

/** Default largest nesting depth of a request body (its objects and arrays), the envelope being depth 1. */
export const DEFAULT_MAX_BODY_DEPTH = 65;

/**
 * The deepest nesting of objects and arrays in `text` (`0` for a scalar),
 * counting brackets outside strings; it stops counting once past `limit`.
 * Text that is not JSON gets some number: the caller parses it anyway.
 */
export function nestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}
