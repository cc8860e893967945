/**
 * The nesting depth of a request's JSON body, read without parsing it: the
 * official SDK validates a request with recursive schemas (zod), which
 * overflow the call stack on a body nested a few thousand levels deep, so
 * such a body is refused before the SDK reads it.
 */

/** Default largest nesting depth of a request body (its objects and arrays), the envelope being depth 1. */
export const DEFAULT_MAX_BODY_DEPTH = 65;

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
  deepest = 0;

  /** Feed the next bytes; `true` once the depth has passed `limit` (the rest need not be read). */
  feed(bytes: Uint8Array, limit: number): boolean {
    for (let i = 0; i < bytes.length; i++) {
      const c = bytes[i] as number;
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === 0x5c) this.#escaped = true;
        else if (c === 0x22) this.#inString = false;
      } else if (c === 0x22) this.#inString = true;
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
 * Whether the body of `request` nests objects and arrays deeper than
 * `limit`, read from a clone, at most `maxBytes` bytes of it: a body
 * declared or found larger is left to the SDK, which answers it 413 under
 * the same bound. Reading stops at the first level past `limit`. Text that
 * is not JSON gets some answer: the SDK parses it anyway. A body that cannot
 * be read counts as not too deep (the SDK meets the same failure).
 */
export async function nestedDeeperThan(
  request: Request,
  limit: number,
  maxBytes: number,
): Promise<boolean> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) return false;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    reader = request.clone().body?.getReader();
    if (!reader) return false;
    const scan = new DepthScan();
    let read = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      read += value.length;
      if (read > maxBytes) return false;
      if (scan.feed(value, limit)) return true;
    }
  } catch {
    return false;
  } finally {
    // Only the clone's branch: the request's own body is still the SDK's to read.
    reader?.cancel().catch(() => {});
  }
}

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
