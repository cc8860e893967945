/**
 * The nesting depth and the member count of a request's JSON body, read
 * without parsing it: the official SDK validates a request with recursive
 * schemas (zod), which overflow the call stack on a body nested a few
 * thousand levels deep, and merges the members of `_meta` in time that grows
 * with the square of their count (50,000 members held the server for about
 * seven seconds), so such bodies are refused before the SDK reads them.
 */

/** Default largest nesting depth of a request body (its objects and arrays), the envelope being depth 1. */
export const DEFAULT_MAX_BODY_DEPTH = 65;

/** Most members (of objects, at any depth) and array elements a request's `params._meta` may hold. */
export const MAX_META_MEMBERS = 1000;

/**
 * Default most `:` and `,` outside strings a request body may hold (about
 * two per object member and one per array element: some 50,000 members).
 * The SDK's validation, the gate's checks and the tool's schema each take
 * time that grows with that count (about 12 µs per member together), and a
 * 4 MiB body holds some 340,000: four seconds of the event loop.
 */
export const DEFAULT_MAX_BODY_ITEMS = 100_000;

/** The SDK's default `maxRequestBodySize`, bytes (4 MiB). */
export const SDK_DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Counts the nesting of objects and arrays in JSON text fed as UTF-8 bytes,
 * brackets outside strings only. Bytes, not characters: `"`, `\`, brackets
 * and braces are ASCII, and no byte of a multi-byte UTF-8 sequence is.
 */
class DepthScan {
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** After `\u`: 1 before the first hex digit, 2 before the second when the first was `d`, else 0. */
  #hex = 0;
  deepest = 0;
  /**
   * Whether a string holds an escape of a surrogate (`\uD800` to `\uDFFF`):
   * the only way a body of UTF-8 bytes can spell a lone surrogate. Pairs
   * (an emoji written as two escapes) count too; the parsed body tells.
   */
  surrogateEscapes = false;
  /**
   * Object members and array elements in the whole body, roughly: each `:`
   * and `,` outside strings (at least the members and elements, less one
   * per container; a member counts twice).
   */
  items = 0;
  /**
   * The first byte that is not white space or a byte order mark's: `[`
   * (0x5b) for a JSON-RPC batch; 0 until one is read.
   */
  first = 0;
  /** Whether a byte 0 was read: no JSON text holds one (UTF-16 text read as bytes does). */
  nul = false;

  /** Feed the next bytes; `true` once the depth has passed `limit` (the rest need not be read). */
  feed(bytes: Uint8Array, limit: number): boolean {
    for (let i = 0; i < bytes.length; i++) {
      const c = bytes[i] as number;
      // JSON's white space, and the bytes of a leading BOM (EF BB BF), none of which starts a value.
      if (this.first === 0 && c > 0x20 && c !== 0xef && c !== 0xbb && c !== 0xbf) this.first = c;
      if (c === 0) this.nul = true;
      if (this.#inString) {
        // Hex digits are neither `"` nor `\`: the checks below still read each byte.
        if (this.#hex === 1) this.#hex = (c | 0x20) === 0x64 ? 2 : 0;
        else if (this.#hex === 2) {
          const low = c | 0x20;
          if (c === 0x38 || c === 0x39 || (low >= 0x61 && low <= 0x66))
            this.surrogateEscapes = true;
          this.#hex = 0;
        }
        if (this.#escaped) {
          this.#escaped = false;
          if (c === 0x75) this.#hex = 1;
        } else if (c === 0x5c) this.#escaped = true;
        else if (c === 0x22) this.#inString = false;
      } else if (c === 0x22) this.#inString = true;
      else if (c === 0x3a || c === 0x2c) this.items++;
      else if (c === 0x7b || c === 0x5b) {
        if (++this.#depth > this.deepest) {
          this.deepest = this.#depth;
          if (this.deepest > limit) return true;
        }
      } else if (c === 0x7d || c === 0x5d) this.#depth--;
    }
    return false;
  }
}

/**
 * What {@link scanBody} found: bytes that are not UTF-8, nesting past the
 * limit, or about how many members and elements the body holds (`DepthScan.items`)
 * and whether it escapes a surrogate (`DepthScan.surrogateEscapes`).
 */
export type BodyScan =
  | { notUtf8: true; deeper: false }
  | { notJson: true; deeper: false }
  | { deeper: true }
  | { deeper: false; items: number; surrogateEscapes: boolean; batch: boolean };

/**
 * Whether the body of `request` is UTF-8 (RFC 8259 §8.1), whether it nests
 * objects and arrays deeper than `limit`, and else about how many members
 * and elements it holds, read from a clone, at most `maxBytes` bytes of it:
 * a body declared or found larger is left to the SDK, which answers it 413
 * under the same bound (items 0). Reading stops at the first level past
 * `limit` or the first byte that is not UTF-8 (the SDK's `Request.json()`
 * would repair it into U+FFFD, so that two different byte sequences read as
 * the same arguments). Text that is not JSON gets some answer: the SDK
 * parses it anyway. A body that cannot be read counts as not too deep (the
 * SDK meets the same failure).
 */
export async function scanBody(
  request: Request,
  limit: number,
  maxBytes: number,
): Promise<BodyScan> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  const unread = { deeper: false, items: 0, surrogateEscapes: false, batch: false } as const;
  if (declared > maxBytes) return unread;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    reader = request.clone().body?.getReader();
    if (!reader) return unread;
    const scan = new DepthScan();
    // A leading BOM is dropped, as `Request.json()` drops it; anything else not UTF-8 throws.
    const utf8Check = new TextDecoder('utf-8', { fatal: true });
    const isUtf8 = (bytes?: Uint8Array) => {
      try {
        if (bytes) utf8Check.decode(bytes, { stream: true });
        else utf8Check.decode();
        return true;
      } catch {
        return false;
      }
    };
    let read = 0;
    let head = Buffer.alloc(0);
    for (;;) {
      const { done, value } = await reader.read();
      if (done)
        return isUtf8()
          ? {
              deeper: false,
              items: scan.items,
              surrogateEscapes: scan.surrogateEscapes,
              batch: scan.first === 0x5b && !scan.nul,
            }
          : NOT_UTF8;
      read += value.length;
      if (read > maxBytes) return unread;
      if (!isUtf8(value)) return NOT_UTF8;
      if (head.length < TWO_BOMS.length) {
        head = Buffer.concat([head, value]).subarray(0, TWO_BOMS.length);
        if (head.equals(TWO_BOMS)) return NOT_JSON;
      }
      if (scan.feed(value, limit)) return { deeper: true };
    }
  } catch {
    return unread;
  } finally {
    // Only the clone's branch: the request's own body is still the SDK's to read.
    reader?.cancel().catch(() => {});
  }
}

const NOT_UTF8 = { notUtf8: true, deeper: false } as const;
const NOT_JSON = { notJson: true, deeper: false } as const;
/**
 * Two byte order marks: UTF-8 decoding drops the first (WHATWG Encoding) and
 * JSON has no place for the second, yet undici's `Request.json()` drops both,
 * so the SDK would read a body `@mrtr/server` refuses as no JSON (and its
 * era classifier, which drops one, another way again).
 */
const TWO_BOMS = Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf]);

const utf8 = new TextDecoder('utf-8');

/**
 * The JSON body of `request`, read from a clone, or `undefined` when it is
 * not JSON or is larger than `maxBytes` (left to the SDK, which answers 413
 * under the same bound): a body is never read into memory past the bound.
 */
export async function jsonWithin(request: Request, maxBytes: number): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) return undefined;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    reader = request.clone().body?.getReader();
    if (!reader) return undefined;
    const chunks: Uint8Array[] = [];
    let read = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      read += value.length;
      if (read > maxBytes) return undefined;
      chunks.push(value);
    }
    // As `Request.json()` reads it: UTF-8, a leading BOM dropped.
    return JSON.parse(utf8.decode(Buffer.concat(chunks)));
  } catch {
    return undefined;
  } finally {
    reader?.cancel().catch(() => {});
  }
}

/**
 * Whether `body` is a JSON-RPC message whose `params._meta` holds more than
 * {@link MAX_META_MEMBERS} object members and array elements, counted at
 * every depth (and no further than one past the bound).
 */
export function metaTooLarge(body: unknown): boolean {
  const params = (body as { params?: unknown } | null)?.params;
  const meta = (params as { _meta?: unknown } | null | undefined)?._meta;
  let count = 0;
  const stack: unknown[] = [meta];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== 'object') continue;
    const items = Array.isArray(value) ? value : Object.values(value);
    count += items.length;
    if (count > MAX_META_MEMBERS) return true;
    for (const item of items) stack.push(item);
  }
  return false;
}
