/**
 * The request metadata headers of Streamable HTTP that client and server must
 * agree on (MCP 2026-07-28, `basic/transports/streamable-http`, "Request
 * Metadata", "Value Encoding", "Custom Headers from Tool Parameters"): the
 * Base64 sentinel for values a header cannot carry as they are, the methods
 * whose `Mcp-Name` header mirrors a parameter, and the `x-mcp-header`
 * annotations of a tool's `inputSchema` that name its `Mcp-Param-{Name}`
 * headers.
 */

// RFC 9110 §5.5 field-value characters, as MCP restricts them: visible ASCII, space and tab.
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;
// RFC 9110 §5.6.2 token: what an `x-mcp-header` name must be.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Canonical Base64 (RFC 4648 §4): whole quanta, padding only at the end.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const PREFIX = '=?base64?';
const SUFFIX = '?=';
const SENTINEL = /^=\?base64\?.*\?=$/s;

/**
 * Encode a value for `Mcp-Name` or `Mcp-Param-{Name}` ("Value Encoding"): as
 * it is when it is visible ASCII without leading or trailing whitespace,
 * otherwise `=?base64?{Base64 of its UTF-8}?=`. A plain value that looks like
 * the sentinel is encoded too, so the server never decodes what it should not.
 * @param value the header value before encoding (any string, including `""`).
 * @returns the header value to send.
 */
export function encodeHeaderValue(value: string): string {
  if (FIELD_VALUE.test(value) && value.trim() === value && !SENTINEL.test(value)) return value;
  let binary = '';
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `${PREFIX}${btoa(binary)}${SUFFIX}`;
}

/**
 * Decode a header value that may use the `=?base64?{value}?=` sentinel
 * ("Value Encoding"). A value without both markers is literal.
 * @returns the decoded string, or `undefined` when the value has characters a
 *   header may not carry, or its Base64 is not canonical or not valid UTF-8.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!FIELD_VALUE.test(value)) return undefined;
  if (!(value.startsWith(PREFIX) && value.endsWith(SUFFIX) && value.length >= 11)) return value;
  const encoded = value.slice(PREFIX.length, -SUFFIX.length);
  if (!BASE64.test(encoded)) return undefined;
  const bytes = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Methods whose `Mcp-Name` header mirrors `params.name` or `params.uri` ("Request Metadata"). */
export const MCP_NAME_FIELD: Readonly<Record<string, 'name' | 'uri'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/** One valid `x-mcp-header` annotation of a tool's `inputSchema`. */
export interface HeaderAnnotation {
  /** The name part of `Mcp-Param-{name}`, as annotated. */
  name: string;
  /** The chain of `properties` keys from the schema root to the annotated property. */
  path: string[];
  /** The annotated property's JSON Schema `type`. */
  type: 'string' | 'integer' | 'boolean';
}

/**
 * Deepest nesting of objects and arrays {@link readHeaderAnnotations} walks
 * in an `inputSchema` (the schema itself is depth 0); a deeper schema is
 * refused. Real tool schemas nest a handful of levels.
 */
export const MAX_SCHEMA_DEPTH = 64;

/** The outcome of {@link readHeaderAnnotations}. */
export type HeaderAnnotations =
  | { ok: true; annotations: HeaderAnnotation[] }
  | { ok: false; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Read and check every `x-mcp-header` annotation of a tool's `inputSchema`
 * ("Schema Extension"): a non-empty RFC 9110 token, unique
 * case-insensitively, on a property of type `string`, `integer` or `boolean`
 * reached from the root through `properties` keys only (anywhere else it is
 * not statically reachable). A client leaves a tool that breaks a rule out of
 * `tools/list`; a server refuses to declare it. A schema nesting objects and
 * arrays deeper than {@link MAX_SCHEMA_DEPTH} levels is refused as a whole.
 * @param inputSchema the tool's `inputSchema` (any value).
 * @returns the annotations in schema order, or `{ok: false, reason}` naming
 *   the first broken rule. Never throws.
 */
export function readHeaderAnnotations(inputSchema: unknown): HeaderAnnotations {
  const found: HeaderAnnotation[] = [];
  const problems: string[] = [];
  // Every object in the schema, depth first in schema order, from a stack rather than by recursion:
  // a schema nested 20,000 deep must be refused, not overflow the call stack.
  // `path` stays defined only while every step was `properties.<key>`.
  const stack: { node: unknown; path: string[] | undefined; trail: string; depth: number }[] = [
    { node: inputSchema, path: [], trail: '', depth: 0 },
  ];
  while (stack.length > 0) {
    const { node, path, trail, depth } = stack.pop() as (typeof stack)[number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth > MAX_SCHEMA_DEPTH)
      return {
        ok: false,
        reason: `the inputSchema nests deeper than ${MAX_SCHEMA_DEPTH} levels`,
      };
    const children: typeof stack = [];
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries())
        children.push({ node: item, path: undefined, trail: `${trail}/${i}`, depth: depth + 1 });
    } else {
      const object = node as Record<string, unknown>;
      if (Object.hasOwn(object, 'x-mcp-header')) {
        const name = object['x-mcp-header'];
        const type = object.type;
        if (path === undefined || path.length === 0) {
          problems.push(
            `x-mcp-header at ${trail || '/'} is not on a property reached through properties (not statically reachable)`,
          );
        } else if (typeof name !== 'string' || !TOKEN.test(name)) {
          problems.push(`x-mcp-header at ${trail} is not an HTTP token`);
        } else if (type !== 'string' && type !== 'integer' && type !== 'boolean') {
          problems.push(
            `x-mcp-header "${name}" is on a property that is not string, integer or boolean`,
          );
        } else {
          found.push({ name, path, type });
        }
      }
      for (const [key, child] of Object.entries(object)) {
        if (key === 'properties' && isObject(child) && path !== undefined) {
          for (const [prop, schema] of Object.entries(child))
            children.push({
              node: schema,
              path: [...path, prop],
              trail: `${trail}/properties/${prop}`,
              depth: depth + 1,
            });
        } else if (key !== 'x-mcp-header') {
          children.push({
            node: child,
            path: undefined,
            trail: `${trail}/${key}`,
            depth: depth + 1,
          });
        }
      }
    }
    // Reversed onto the stack, so the first child is walked first: annotations stay in schema order.
    for (let i = children.length - 1; i >= 0; i--)
      stack.push(children[i] as (typeof stack)[number]);
  }
  const seen = new Map<string, string>();
  for (const { name } of found) {
    const first = seen.get(name.toLowerCase());
    if (first !== undefined)
      problems.push(`x-mcp-header "${name}" is used twice: it repeats "${first}"`);
    else seen.set(name.toLowerCase(), name);
  }
  return problems.length > 0
    ? { ok: false, reason: problems[0] as string }
    : { ok: true, annotations: found };
}

/**
 * Why a JSON-RPC body cannot be read as sent, or `undefined`: JSON-RPC
 * bodies are UTF-8 (RFC 8259 §8.1), so a `charset` parameter of the
 * Content-Type (as parsed, RFC 9110 §8.3.2) other than UTF-8 (any letter
 * case, `utf8` too) is refused rather than misread, and a
 * `Content-Encoding` other than `identity` is one the server does not
 * decode, which it must not ignore (RFC 9110 §8.4; answered 415 with
 * `Accept-Encoding: identity`, §15.5.16). Shared by `@mrtr/server`'s
 * endpoint and `@mrtr/sdk`'s bridge, so both refuse alike.
 * @param charset the Content-Type's `charset` parameter, `undefined` when absent.
 * @param coding the Content-Encoding field, `null` when absent.
 * @returns the message of the `-32600` to send, naming the value (cut to 40 characters).
 */
export function bodyEncodingProblem(
  charset: string | undefined,
  coding: string | null,
): string | undefined {
  if (charset !== undefined && !/^utf-?8$/i.test(charset))
    return `Content-Type charset ${shownText(charset, 40)} is not supported: send UTF-8 (charset=utf-8 or none)`;
  // `trim()` drops what `\s` matches; `/^\s*(identity)?\s*$/` backtracked quadratically over it.
  const trimmed = coding === null ? '' : coding.trim().toLowerCase();
  if (trimmed !== '' && trimmed !== 'identity')
    return `Content-Encoding ${shownText(coding ?? '', 40)} is not supported: send the body uncompressed`;
  return undefined;
}

/**
 * `text` cut to at most `max` UTF-16 code units, then `…`, never between the
 * two halves of a surrogate pair: what a message may quote of text a client
 * chose (a name, a header value) without growing with it.
 * @returns `text` itself when it is not longer than `max`.
 * @throws {RangeError} when `max` is not a whole number ≥ 0.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  if (!(Number.isSafeInteger(max) && max >= 0))
    throw new RangeError(`clip(): max must be a whole number of code units ≥ 0; got ${max}`);
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/**
 * Scripts whose letters join or take half-forms, where ZWJ and ZWNJ choose a
 * form (Arabic, Persian, Syriac, N'Ko, Mongolian, the Indic scripts after a
 * virama): the only places outside emoji where a joiner changes what is drawn.
 */
const JOINING_SCRIPTS = [
  'Arabic',
  'Syriac',
  'Nko',
  'Mongolian',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
]
  .map((s) => `\\p{Script=${s}}`)
  .join('');

/**
 * Most combining marks between a letter (or emoji) and a joiner for
 * {@link STRAY_JOINER} to see the letter: a joiner after a longer run of
 * marks joins nothing a person reads, and counts as stray.
 */
const MAX_MARKS_BEFORE_JOINER = 32;

/**
 * A joiner or selector where it joins or selects nothing, so that text with
 * it is drawn as text without it (`api\u200d-staging` as `api-staging`):
 * - ZWJ (U+200D) other than inside an emoji ZWJ sequence (an emoji, its
 *   modifier or VS16 before, an emoji after) or after a letter or mark of a
 *   joining script (`JOINING_SCRIPTS` above); after a run of more than 32
 *   combining marks, a ZWJ or ZWNJ is stray whatever letter they sit on (the
 *   pattern's scan back is bounded, so it runs in linear time and never
 *   overflows V8's backtracking stack);
 * - ZWNJ (U+200C) other than after a letter or mark of a joining script;
 * - VS15 or VS16 (U+FE0E, U+FE0F) other than after an emoji character,
 *   and after `0`–`9`, `#`, `*` only as a keycap (U+20E3 next);
 * - VS1–VS14 (U+FE00–U+FE0D) other than after a Han or Myanmar character
 *   (their standardized variation sequences);
 * - CGJ (U+034F) other than before a combining mark.
 * Emoji (👩‍💻, ❤️, #️⃣), Persian and the Indic scripts keep theirs. A global
 * pattern: reset `lastIndex`, or use it with `replace`.
 */
export const STRAY_JOINER = new RegExp(
  [
    // A joiner after nothing that joins: not an emoji, its modifier or VS16, a joining script, a mark.
    String.raw`(?<![\p{Extended_Pictographic}\p{Emoji_Modifier}\ufe0f${JOINING_SCRIPTS}\p{M}])\u200d`,
    String.raw`(?<![${JOINING_SCRIPTS}\p{M}])\u200c`,
    // After a mark: the letter the marks sit on decides. The joiner is matched first and the
    // look-behinds then include it: a look-behind tried before it would scan back over the run of
    // marks at every mark, quadratic in the run's length (10,000 marks took seconds).
    // The scan back is bounded: over millions of marks an unbounded one overflowed V8's backtracking
    // stack (RangeError), and a joiner after more marks than that joins nothing a person reads.
    String.raw`[\u200c\u200d](?<=\p{M}[\u200c\u200d])(?<![${JOINING_SCRIPTS}\p{Extended_Pictographic}\p{Emoji_Modifier}]\p{M}{0,${MAX_MARKS_BEFORE_JOINER}}[\u200c\u200d])`,
    // In an emoji sequence, a ZWJ must lead to another emoji.
    String.raw`\u200d(?<=[\p{Extended_Pictographic}\p{Emoji_Modifier}]\p{M}{0,${MAX_MARKS_BEFORE_JOINER}}\u200d)(?<![${JOINING_SCRIPTS}]\p{M}{0,${MAX_MARKS_BEFORE_JOINER}}\u200d)(?!\p{Extended_Pictographic})`,
    String.raw`(?<!\p{Emoji})[\ufe0e\ufe0f]`,
    String.raw`(?<=[0-9#*])[\ufe0e\ufe0f](?!\u20e3)`,
    String.raw`(?<![\p{Script=Han}\p{Script=Myanmar}])[\ufe00-\ufe0d]`,
    String.raw`\u034f(?!\p{M})`,
  ].join('|'),
  'gu',
);

/**
 * Whether `text` holds a joiner or variation selector that joins or selects
 * nothing ({@link STRAY_JOINER}): text a person compares by eye (a name to
 * confirm, a title a question quotes) that would look like other text.
 */
export function hasStrayJoiner(text: string): boolean {
  STRAY_JOINER.lastIndex = 0;
  const found = STRAY_JOINER.test(text);
  STRAY_JOINER.lastIndex = 0;
  return found;
}

/**
 * Control and format characters but the two joiners emoji need (ZWNJ, ZWJ),
 * the line and paragraph separators, other default-ignorable code points but
 * the variation selectors and CGJ (Hangul fillers draw nothing), the blank
 * braille pattern, and private-use and unassigned code points (a font may
 * draw them as nothing): the characters the gate's questions hide.
 */
const UNSHOWN =
  /(?![\ufe00-\ufe0f]|\u034f|\u200c|\u200d)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800]/gu;

/**
 * Text a client chose (a member name, a tool name, a method), as an error
 * message quotes it: well-formed (a lone surrogate becomes U+FFFD), every
 * control and format character (C0 and C1 controls, bidi overrides, tag
 * characters, zero-width spaces; not ZWJ or ZWNJ), U+2028 and U+2029, other
 * default-ignorable code points (Hangul fillers; not the variation
 * selectors), private-use and unassigned code points shown as U+FFFD, so the message cannot reorder, hide or break what it
 * says, then {@link clip}ped to `max` UTF-16 code units.
 * @returns the text as shown; `text` itself when nothing needed changing.
 */
export function shownText(text: string, max: number): string {
  return clip(text.toWellFormed().replace(UNSHOWN, '\ufffd'), max);
}
