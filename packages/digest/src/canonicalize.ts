/**
 * RFC 8785 JSON Canonicalization Scheme (JCS).
 *
 * Objects: members sorted by the UTF-16 code units of their names (RFC 8785
 * §3.2.3); numbers: ECMAScript `Number::toString` (§3.2.2.3), which
 * `JSON.stringify` implements; strings: the minimal escaping of §3.2.2.2,
 * again that of `JSON.stringify` once lone surrogates are refused. Input JSON
 * cannot carry exactly is rejected instead of being silently changed.
 *
 * Why our own and not the `canonicalize` package: that package is exact on
 * every RFC 8785 vector we hold, but it follows `JSON.stringify` for input
 * JSON cannot carry (drops `undefined` members, turns them into `null` in
 * arrays, calls `toJSON`, serializes a `Map` as `{}`) where we must refuse,
 * and a validating pass in front of it costs more than this single pass
 * (figures: `tooling/bench/src/digest.ts`, `packages/digest/README.md`).
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
  | 'unsupported_object'
  | 'too_deep';

/**
 * Most containers (arrays and objects) open at once. Deeper input is refused
 * with `too_deep` rather than exhausting the call stack with a `RangeError`.
 */
export const CANONICALIZE_MAX_DEPTH = 1000;

const CANONICALIZE_ERROR = Symbol.for('@mrtr/digest/CanonicalizeError');

/** Thrown by {@link canonicalize} for input that JSON cannot represent exactly. */
export class CanonicalizeError extends Error {
  override readonly name = 'CanonicalizeError';
  constructor(
    readonly code: CanonicalizeErrorCode,
    /** JSON Pointer (RFC 6901) to the offending value, e.g. `/items/3`; `''` is the root. */
    readonly path: string,
  ) {
    super(`cannot canonicalize value at ${path || '/'}: ${code.replace(/_/g, ' ')}`);
    Object.defineProperty(this, CANONICALIZE_ERROR, { value: true });
  }

  /** Brand check behind `instanceof`: recognised across copies of this package in one process. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && CANONICALIZE_ERROR in value;
  }
}

/** Per-call walk state: keys from the root to the current value, and the containers open. */
interface Walk {
  path: (string | number)[];
  open: object[];
}

function pointer(path: readonly (string | number)[]): string {
  let out = '';
  for (const key of path) out += `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
  return out;
}

/**
 * The member names of `record` in UTF-16 code-unit order (RFC 8785 §3.2.3),
 * which is how both `<` and `Array.prototype.sort` compare strings. Small
 * objects, the usual tool arguments, are sorted in place by insertion: V8's
 * `sort` allocates a work array on every call.
 */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

function fail(code: CanonicalizeErrorCode, path: readonly (string | number)[]): never {
  throw new CanonicalizeError(code, pointer(path));
}

/**
 * At the depth limit: a cycle if some open container repeats (reported where
 * it first closes), otherwise input that is merely too deep. Cycles are found
 * here instead of with a `Set` on every container: any cycle reaches the limit.
 */
function depthFailure(walk: Walk, next: object): never {
  const chain = [...walk.open, next];
  const first = new Set<object>();
  for (let i = 0; i < chain.length; i++) {
    const o = chain[i] as object;
    if (first.has(o)) fail('cycle', walk.path.slice(0, i));
    first.add(o);
  }
  fail('too_deep', walk.path);
}

function serialize(value: unknown, walk: Walk): string {
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) fail('lone_surrogate', walk.path);
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) fail('non_finite_number', walk.path);
      // -0 serializes as 0 (ECMAScript Number::toString), as RFC 8785 requires.
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return fail('undefined', walk.path);
    case 'function':
      return fail('function', walk.path);
    case 'symbol':
      return fail('symbol', walk.path);
    case 'bigint':
      return fail('bigint', walk.path);
  }
  if (value === null) return 'null';
  const obj = value as object;
  if (walk.open.length >= CANONICALIZE_MAX_DEPTH) depthFailure(walk, obj);
  walk.open.push(obj);
  let out: string;
  if (Array.isArray(obj)) {
    out = '[';
    for (let i = 0; i < obj.length; i++) {
      walk.path.push(i);
      out += i === 0 ? serialize(obj[i], walk) : `,${serialize(obj[i], walk)}`;
      walk.path.pop();
    }
    out += ']';
  } else {
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) fail('unsupported_object', walk.path);
    const record = obj as Record<string, unknown>;
    const keys = sortedKeys(record);
    out = '{';
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      walk.path.push(key);
      if (!key.isWellFormed()) fail('lone_surrogate', walk.path);
      const member = `${JSON.stringify(key)}:${serialize(record[key], walk)}`;
      out += i === 0 ? member : `,${member}`;
      walk.path.pop();
    }
    out += '}';
  }
  walk.open.pop();
  return out;
}

/**
 * `"name":` of member names seen before: the same few names (`type`,
 * `properties`, `title`…) recur in every digested question and argument
 * object, and quoting them was a third of a small object's time. Bounded in
 * count and name length, so input cannot grow it past about 100 KB; names
 * that do not fit are quoted each time.
 */
const quotedNames = new Map<string, string>();
const MAX_QUOTED_NAMES = 1024;
const MAX_QUOTED_NAME_LENGTH = 64;

/** Thrown by {@link fastSerialize} on anything it does not serialize; the exact walk then says why and where. */
const NOT_PLAIN: unique symbol = Symbol('not plain JSON');

/** Longest string {@link quoted} scans itself; longer ones go to `JSON.stringify` at once. */
const SCANNED_STRING_LENGTH = 64;

/**
 * A well-formed string as JSON text. Short strings with nothing to escape
 * (ids, schema keywords, titles: most strings of a question) are quoted
 * here: `isWellFormed` and `JSON.stringify` are a call into the runtime
 * each, which was most of a short string's time. Anything else is left to
 * `JSON.stringify`, so the escaping stays that of §3.2.2.2.
 */
function quoted(value: string): string {
  if (value.length <= SCANNED_STRING_LENGTH) {
    let i = 0;
    for (; i < value.length; i++) {
      const c = value.charCodeAt(i);
      // A control character, `"`, `\` or a surrogate (maybe lone): the exact path decides.
      if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) break;
    }
    if (i === value.length) return `"${value}"`;
  }
  if (!value.isWellFormed()) throw NOT_PLAIN;
  return JSON.stringify(value);
}

/** `"name":` for a member name, quoted as any string is; throws {@link NOT_PLAIN} for a lone surrogate. */
function quotedName(key: string): string {
  const known = quotedNames.get(key);
  if (known !== undefined) return known;
  const name = `${quoted(key)}:`;
  if (quotedNames.size < MAX_QUOTED_NAMES && key.length <= MAX_QUOTED_NAME_LENGTH)
    quotedNames.set(key, name);
  return name;
}

/**
 * {@link serialize} without the bookkeeping that only an error needs (the
 * path of keys, the open containers for cycles): for valid input it returns
 * the same text, and on anything else it throws {@link NOT_PLAIN}, after
 * which `canonicalize` walks again with {@link serialize} to report the
 * error with its JSON Pointer. A cycle passes the depth limit here.
 */
function fastSerialize(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return quoted(value);
    case 'number':
      if (!Number.isFinite(value)) throw NOT_PLAIN;
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw NOT_PLAIN;
  }
  if (value === null) return 'null';
  if (depth >= CANONICALIZE_MAX_DEPTH) throw NOT_PLAIN;
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += fastSerialize(value[i], depth + 1);
    }
    return `${out}]`;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const keys = sortedKeys(record);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const name = quotedName(key);
    if (i > 0) out += ',';
    out += name;
    out += fastSerialize(record[key], depth + 1);
  }
  return `${out}}`;
}

/**
 * Serialize a JSON value in RFC 8785 canonical form.
 *
 * @param value plain JSON data: `null`, booleans, finite numbers, strings
 *   without lone surrogates, arrays, and plain objects (no `Date`, `Map`,
 *   class instances, nor `toJSON` hooks), nested at most
 *   {@link CANONICALIZE_MAX_DEPTH} containers deep.
 * @returns the canonical JSON text (a JS string; encode as UTF-8 for bytes).
 * @throws {CanonicalizeError} with a code and the JSON Pointer of the first
 *   value JSON cannot carry exactly: `undefined` (also a hole in a sparse
 *   array), a function, a symbol, a BigInt, `NaN`/`±Infinity`, a lone
 *   surrogate in a string or a member name, a cycle, a non-plain object, or
 *   nesting deeper than the limit (`too_deep`).
 */
export function canonicalize(value: unknown): string {
  try {
    return fastSerialize(value, 0);
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
  }
  // Not plain JSON: the exact walk finds the problem and throws the CanonicalizeError with its path
  // (an accessor of the input is read a second time on this path).
  return serialize(value, { path: [], open: [] });
}
