import type { Json } from '@mrtr/replay';

/** Deepest plain data {@link toJson} copies itself; deeper (or cyclic) values take the JSON round trip. */
const MAX_COPY_DEPTH = 32;

/** Thrown inside {@link copy} on anything the JSON round trip could turn into something else. */
const NOT_PLAIN: unique symbol = Symbol('not plain data');

/**
 * `JSON.parse(JSON.stringify(value))`: the outcome exactly as the replay
 * store records and replays it. Plain data (strings, booleans, `null`,
 * finite numbers other than -0, arrays without holes, objects of
 * `Object.prototype` or none, without `toJSON` and `undefined` members) is
 * copied directly, which the round trip would turn into the same thing; the
 * rest takes the round trip, with its conversions and its errors (a BigInt,
 * a cycle). A tool result is small: the round trip's text and parse were
 * most of the copy's time. (A getter of a value that is not plain data is
 * read a second time, by the round trip.)
 */
export function toJson(value: unknown): Json {
  try {
    return copy(value, 0);
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
  }
  return JSON.parse(JSON.stringify(value)) as Json;
}

function copy(value: unknown, depth: number): Json {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      // JSON makes -0 a 0 and a non-finite number null.
      if (!Number.isFinite(value) || Object.is(value, -0)) throw NOT_PLAIN;
      return value;
    case 'object':
      break;
    default:
      throw NOT_PLAIN;
  }
  if (value === null) return null;
  if (depth >= MAX_COPY_DEPTH || (value as { toJSON?: unknown }).toJSON !== undefined)
    throw NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) throw NOT_PLAIN;
    const out: Json[] = [];
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined) throw NOT_PLAIN; // a hole or undefined: JSON writes null
      out.push(copy(item, depth + 1));
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const out: Record<string, Json> = {};
  for (const key of Object.keys(record)) {
    // An own `__proto__` would set the copy's prototype where JSON.parse makes a member.
    if (key === '__proto__') throw NOT_PLAIN;
    const member = record[key];
    if (member === undefined) throw NOT_PLAIN; // JSON drops it
    out[key] = copy(member, depth + 1);
  }
  return out;
}
