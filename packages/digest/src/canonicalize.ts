/**
 * RFC 8785 JSON Canonicalization Scheme (JCS).
 *
 * Objects: members sorted by the UTF-16 code units of their names (RFC 8785
 * §3.2.3); numbers: ECMAScript `Number.prototype.toString` serialization
 * (§3.2.2.3), which `JSON.stringify` uses; strings: the minimal escaping of
 * §3.2.2.2, again that of `JSON.stringify` for well-formed strings. Input
 * JSON cannot carry exactly is rejected instead of being silently changed.
 */

/** Why a value cannot be canonicalized. */
export type CanonicalizeErrorCode =
  | 'undefined'
  | 'function'
  | 'symbol'
  | 'bigint'
  | 'non_finite_number'
  | 'lone_surrogate'
  | 'cycle'
  | 'unsupported_object';

/** Thrown by {@link canonicalize} for input that JSON cannot represent exactly. */
export class CanonicalizeError extends Error {
  override readonly name = 'CanonicalizeError';
  constructor(
    readonly code: CanonicalizeErrorCode,
    /** JSON-Pointer-like path to the offending value, e.g. `/items/3`. */
    readonly path: string,
  ) {
    super(`cannot canonicalize value at ${path || '/'}: ${code.replace(/_/g, ' ')}`);
  }
}

// A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function serializeString(s: string, path: string): string {
  if (LONE_SURROGATE.test(s)) throw new CanonicalizeError('lone_surrogate', path);
  return JSON.stringify(s);
}

function pointer(path: string, key: string | number): string {
  return `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

function serialize(value: unknown, path: string, seen: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return serializeString(value, path);
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalizeError('non_finite_number', path);
      // -0 serializes as 0 (ECMAScript Number::toString), as RFC 8785 requires.
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      throw new CanonicalizeError('undefined', path);
    case 'function':
      throw new CanonicalizeError('function', path);
    case 'symbol':
      throw new CanonicalizeError('symbol', path);
    case 'bigint':
      throw new CanonicalizeError('bigint', path);
  }
  if (value === null) return 'null';
  const obj = value as object;
  if (seen.has(obj)) throw new CanonicalizeError('cycle', path);
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      const parts: string[] = [];
      for (let i = 0; i < obj.length; i++) parts.push(serialize(obj[i], pointer(path, i), seen));
      return `[${parts.join(',')}]`;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      throw new CanonicalizeError('unsupported_object', path);
    }
    const record = obj as Record<string, unknown>;
    // Array.prototype.sort compares strings by UTF-16 code units: exactly RFC 8785 §3.2.3.
    const keys = Object.keys(record).sort();
    const parts: string[] = [];
    for (const key of keys) {
      const member = serialize(record[key], pointer(path, key), seen);
      parts.push(`${serializeString(key, pointer(path, key))}:${member}`);
    }
    return `{${parts.join(',')}}`;
  } finally {
    seen.delete(obj);
  }
}

/**
 * Serialize a JSON value in RFC 8785 canonical form.
 *
 * @param value plain JSON data: `null`, booleans, finite numbers, strings
 *   without lone surrogates, arrays, and plain objects (no `Date`, `Map`,
 *   class instances, nor `toJSON` hooks).
 * @returns the canonical JSON text (a JS string; encode as UTF-8 for bytes).
 * @throws {CanonicalizeError} with a code and the path of the first value
 *   JSON cannot carry exactly: `undefined`, a function, a symbol, a BigInt,
 *   `NaN`/`±Infinity`, a lone surrogate, a cycle, or a non-plain object.
 */
export function canonicalize(value: unknown): string {
  return serialize(value, '', new Set());
}
