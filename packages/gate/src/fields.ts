import { field, type PrimitiveSchemaDefinition, STRAY_JOINER } from '@mrtr/wire';

/**
 * Field kinds of a gated tool's form (`gate.tool({ form })`). Each kind
 * becomes a field of the flat form subset of `client/elicitation` and brings
 * the check that goes with it, so a tool never writes one by hand:
 * {@link choose} implies "the answer is one of the live choices",
 * {@link confirm} and {@link typeToConfirm} imply consent (a form needs one
 * of them), {@link typeToConfirm} implies "the typed text equals the target".
 */
export type FormField = ChooseField | ConfirmField | TypedField | TextField | FlagField;

/** Title and description the person sees. */
export interface FieldLabels {
  title: string;
  description?: string;
}

/** A choice among candidates the tool finds at ask time (`ask` returns them in `choices`). */
export interface ChooseField extends FieldLabels {
  readonly kind: 'choose';
}
/** A yes box: the answer must be `true` to consent; `false` is a refusal that uses the ticket up. */
export interface ConfirmField extends FieldLabels {
  readonly kind: 'confirm';
}
/** Type the name of the target to consent (`ask` returns the expected text in `expect`). */
export interface TypedField extends FieldLabels {
  readonly kind: 'typed';
}
/** Free text, e.g. a reason recorded in the audit trail; never ask for a secret here. */
export interface TextField extends FieldLabels {
  readonly kind: 'text';
  minLength?: number;
  maxLength?: number;
  /** Whether the person may leave it empty (default `false`: required). */
  optional?: boolean;
}
/** An option (e.g. "also destroy the volumes"); never read as consent. */
export interface FlagField extends FieldLabels {
  readonly kind: 'flag';
  default: boolean;
}

/**
 * `labels` checked and followed by `kind`: a plain JavaScript caller's own
 * `kind` member cannot turn a consent box into an option, nor a title that is
 * no string make a form no client can show.
 * @throws {TypeError} when `title` is not a string or `description` is neither a string nor absent.
 */
function labelled<L extends FieldLabels, K extends FormField['kind']>(
  builder: string,
  labels: L,
  kind: K,
): L & { readonly kind: K } {
  if (typeof labels?.title !== 'string')
    throw new TypeError(`${builder}(): title must be a string`);
  if (labels.description !== undefined && typeof labels.description !== 'string')
    throw new TypeError(`${builder}(): description must be a string when given`);
  return { ...labels, kind };
}

/**
 * Choose one of the candidates `ask` returns under this field's name in
 * `choices` (`[{ value, label }]`: `value` is what the answer carries,
 * `label` what the person reads), shown as a titled single-select enum
 * (`oneOf: [{ const, title }]`); an answer outside them is asked again. When
 * none is left (`choices` empty or missing) the call is refused, an `isError`
 * result saying there is nothing to choose from, and nothing is asked.
 * @param labels `{ title, description? }` of the field.
 * @throws {TypeError} when `title` is not a string or `description` is neither a string nor absent.
 */
export const choose = (labels: FieldLabels): ChooseField => labelled('choose', labels, 'choose');
/**
 * A "yes, do it" box the person must tick: a boolean field whose answer must
 * be `true` to consent (`false` is a refusal that uses the ticket up).
 * @param labels `{ title, description? }` of the field.
 * @throws {TypeError} when `title` is not a string or `description` is neither a string nor absent.
 */
export const confirm = (labels: FieldLabels): ConfirmField =>
  labelled('confirm', labels, 'confirm');
/**
 * The person types the target's name (`ask` returns it in `expect`); a mismatch is asked again.
 * @param labels `{ title, description? }` of the field.
 * @throws {TypeError} when `title` is not a string or `description` is neither a string nor absent.
 */
export const typeToConfirm = (labels: FieldLabels): TypedField =>
  labelled('typeToConfirm', labels, 'typed');
/**
 * Free text with optional length bounds (in code points).
 * @param labels `{ title, description?, minLength?, maxLength?, optional? }`.
 * @throws {TypeError} when `minLength` or `maxLength` is not a safe integer ≥ 0, or
 *   `minLength` > `maxLength`: the form schema would be invalid (`client/elicitation`
 *   bounds are integers), and an approval page would refuse it on every call;
 *   when `optional` is given and not a boolean, `title` is not a string, or
 *   `description` is neither a string nor absent.
 */
export const text = (
  labels: FieldLabels & Omit<TextField, 'kind' | keyof FieldLabels>,
): TextField => {
  const checked = labelled('text', labels, 'text');
  if (labels.optional !== undefined && typeof labels.optional !== 'boolean')
    throw new TypeError('text(): optional must be true or false when given');
  for (const bound of ['minLength', 'maxLength'] as const) {
    const value = labels[bound];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0))
      throw new TypeError(
        `text(): ${bound} must be a whole number of characters ≥ 0; got ${value}`,
      );
  }
  if ((labels.minLength ?? 0) > (labels.maxLength ?? Number.POSITIVE_INFINITY))
    throw new TypeError(
      `text(): minLength ${labels.minLength} is more than maxLength ${labels.maxLength}: no answer fits`,
    );
  return checked;
};
/**
 * A boolean option (`{ type: "boolean", default }`), handed to `perform` as
 * the person left it; never read as consent.
 * @param labels `{ title, description?, default }`.
 * @throws {TypeError} when `default` is not `true` or `false` (the form would
 *   not be valid, and `perform` would get no answer for the option), or `title`
 *   is not a string, or `description` is neither a string nor absent.
 */
export const flag = (labels: FieldLabels & { default: boolean }): FlagField => {
  const checked = labelled('flag', labels, 'flag');
  if (typeof labels.default !== 'boolean')
    throw new TypeError('flag(): default must be true or false');
  return checked;
};

/** The fields of a form, by name (the order is the order shown). */
export type FormFields = Record<string, FormField>;

/** The value `perform` receives for each field. */
export type AnswerOf<F extends FormFields> = {
  [K in keyof F]: F[K] extends ChooseField
    ? string
    : F[K] extends ConfirmField
      ? true
      : F[K] extends FlagField
        ? boolean
        : F[K] extends TextField
          ? F[K]['optional'] extends true
            ? string | undefined
            : string
          : string;
};

/** A candidate of a {@link choose} field: the value sent back, and the label the person reads. */
export interface Choice {
  value: string;
  label: string;
}

/**
 * The field's schema in the form subset, with the live `choices` of a
 * choose field.
 * @throws {TypeError} for a choose field without choices, or bounds out of order.
 */
export function fieldSchema(
  f: FormField,
  choices: readonly Choice[] | undefined,
): PrimitiveSchemaDefinition {
  const labels = {
    title: f.title,
    ...(f.description !== undefined ? { description: f.description } : {}),
  };
  switch (f.kind) {
    case 'choose':
      if (!choices || choices.length === 0)
        throw new TypeError(`choose field "${f.title}" has no choices`);
      return field.select(
        choices.map((c) => ({ const: c.value, title: c.label })),
        labels,
      );
    case 'confirm':
      return field.boolean(labels);
    case 'typed':
      // `...{}` first: V8 (Node 20) promotes a leading spread's copy that takes more properties.
      return field.string({ ...{}, ...labels, minLength: 1 });
    case 'text':
      return field.string({
        ...{},
        ...labels,
        ...(f.minLength !== undefined ? { minLength: f.minLength } : {}),
        ...(f.maxLength !== undefined ? { maxLength: f.maxLength } : {}),
      });
    case 'flag':
      return field.boolean({ ...{}, ...labels, default: f.default });
  }
}

/** Whether the person must answer the field. */
export function isRequired(f: FormField): boolean {
  return f.kind === 'flag' ? false : f.kind === 'text' ? f.optional !== true : true;
}

/** Whether the field only says yes (left out of the approval page, where Approve is the consent). */
export function isConsent(f: FormField): boolean {
  return f.kind === 'confirm' || f.kind === 'typed';
}

/** Line breaks and tabs: shown as one space, so stored text cannot start a line of the question. */
const LINE_BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]+/g;
/**
 * Other control characters, the bidi controls (Trojan Source, CVE-2021-42574)
 * and every other format character (tag characters a model reads and a
 * person does not see, zero-width spaces, the BOM), every other
 * default-ignorable code point (Hangul fillers) and the blank braille
 * pattern, but the joiners (ZWJ, ZWNJ, CGJ) and variation selectors that
 * emoji and several scripts need: shown as U+FFFD. So are private-use and
 * unassigned code points (`\p{Co}`, `\p{Cn}`), which a client's font may draw
 * as nothing (`prod\u{e000}-db` read as `prod-db`), as the approval page and
 * `mrtr` show them as codes.
 */
const HIDDEN =
  /(?![\ufe00-\ufe0f]|\u034f|\u200c|\u200d)[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800]/gu;
/**
 * An emoji tag sequence with the black flag as its base that can name a
 * subdivision flag (UTS #51 `emoji_tag_sequence`: U+1F3F4, a tag spec, then
 * U+E007F CANCEL TAG; the spec of a valid one is a CLDR subdivision code,
 * 3 to 6 lower-case letters and digits, as tag characters), e.g. the flag of
 * England; kept whole. A spec of other tag characters (capitals, spaces,
 * punctuation) or longer could carry a sentence a model reads and a person
 * does not see: not kept. The alternative: a {@link HIDDEN} character
 * anywhere else, tag characters included.
 */
const TAG_SEQUENCE_OR_HIDDEN = new RegExp(
  String.raw`(\u{1f3f4}[\u{e0030}-\u{e0039}\u{e0061}-\u{e007a}]{3,6}\u{e007f})|${HIDDEN.source}`,
  'gu',
);
/** A tag character: one left outside a well-formed sequence once a character was cut. */
const TAG = /[\u{e0000}-\u{e007f}]/u;

/**
 * `text` with every {@link HIDDEN} character as U+FFFD, well-formed flag tag sequences kept, and
 * every joiner or variation selector that joins nothing (`STRAY_JOINER` of `@mrtr/wire`) as U+FFFD.
 */
function hiddenReplaced(text: string): string {
  return text
    .replace(TAG_SEQUENCE_OR_HIDDEN, (found, sequence: string | undefined) =>
      sequence === undefined ? '\ufffd' : found,
    )
    .replace(STRAY_JOINER, '\ufffd');
}
/** Most code points per user-perceived character a preview keeps (a family emoji has 7). */
const MAX_UNITS_PER_CHARACTER = 16;
/** Most combining marks in a row a preview keeps (Vietnamese stacks two, pointed Hebrew three or four). */
const MAX_MARKS_IN_A_ROW = 4;
const MARK = /\p{M}/u;
/** Joiners between two marks neither end a run of marks nor count in it: they draw nothing. */
const JOINER = /[\u034f\u200c\u200d]/u;
/** Text a preview returns as it is when short enough: printable ASCII, one code point per character. */
const PLAIN = /^[\x20-\x7e]*$/;

/**
 * A text cut to at most `max` user-perceived characters (grapheme clusters,
 * `Intl.Segmenter`), with `…` when cut: never in the middle of a character,
 * an emoji or a combining sequence, so a preview stays valid Unicode. It is
 * one line: line breaks and tabs become a space, other control and format
 * characters (bidi controls, tag characters, zero-width spaces),
 * private-use and unassigned code points U+FFFD, so
 * stored text (a note body, a name) shown in a question cannot add lines
 * that look like the server's, reorder what the person reads, or carry text
 * the person cannot see. An emoji tag sequence on the black flag that can
 * name a subdivision (UTS #51 `emoji_tag_sequence`: U+1F3F4, 3 to 6 tag
 * characters of lower-case letters and digits, U+E007F; the flags of
 * England, Scotland and Wales) is one character and kept; a tag character
 * anywhere else, or in a sequence with other tags, without its CANCEL TAG or
 * cut short by the cap below, is U+FFFD. Joiners inside emoji are
 * kept; a joiner or variation selector that joins nothing (outside emoji,
 * joining and Indic scripts, keycaps: `STRAY_JOINER` of `@mrtr/wire`;
 * `api\u200d-staging` would read as `api-staging`) is U+FFFD; every character, however short the text, is cut to 16 code points
 * and to 4 combining marks in a row (joiners between them do not end the
 * row): a stack of marks draws over the lines around it.
 * @param max most characters kept, `…` included when cut: a whole number ≥ 1.
 * @throws {RangeError} when `max` is not a whole number ≥ 1 (a preview of none would be `…` alone).
 */
export function preview(value: string, max: number): string {
  if (!(Number.isSafeInteger(max) && max >= 1))
    throw new RangeError(`preview(): max must be a whole number of characters ≥ 1; got ${max}`);
  // Only a head that holds more than `max` characters is read: V8's Intl.Segmenter takes time
  // in the length of the whole text for each character it yields (a 4 MiB answer: 0.2 s for
  // 60 characters), and the cleaning regexes time in its length.
  // Line breaks first, over the whole text (one linear pass): a run of thousands is one space,
  // and must not end the head before the text after it.
  const flat = value.replace(LINE_BREAKS, ' ');
  const limit = (max + 1) * HEAD_UNITS_PER_CHARACTER;
  const whole = flat.length <= limit;
  const head = whole ? flat : flat.slice(0, limit);
  const clean = hiddenReplaced(head.toWellFormed());
  if (whole && clean.length <= max && PLAIN.test(clean)) return clean;
  const parts: string[] = [];
  let units = 0;
  for (const { segment } of segmenter().segment(clean)) {
    const kept = oneCharacter(segment);
    parts.push(kept);
    units += kept.length;
    if (parts.length > max) break;
  }
  if (whole && parts.length <= max && units === clean.length) return clean;
  if (whole && parts.length <= max) return parts.join('');
  // A head that ran out first may end inside a character: its last part is not shown.
  const shown = parts.length > max || whole ? parts : parts.slice(0, -1);
  return `${shown.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/**
 * UTF-16 units per character {@link preview} reads at most: four times the
 * {@link MAX_UNITS_PER_CHARACTER} code points a character keeps, each of two
 * units. A character longer than that (a stack of hundreds of marks) is cut
 * to those anyway; the head read ends after `max + 1` such characters.
 */
const HEAD_UNITS_PER_CHARACTER = 4 * 2 * MAX_UNITS_PER_CHARACTER;

/**
 * Text that someone other than the server chose (a stored name or title, an
 * argument) as a question or a result quotes it: its {@link preview} cut to
 * `max` characters, in double quotes, with its own `"` and `\` escaped by a
 * `\` (as in a JSON string), and so every character drawn like a double
 * quote (see `QUOTE_LIKE` below), so that it cannot close the quote, nor seem
 * to, and go on as the server's own sentence: `Delete "a\" (keeps the data).
 * Delete \"b"?`.
 * @param value any string (lone surrogates become U+FFFD, as in `preview`).
 * @param max most user-perceived characters of the value kept (then `…`): a whole number ≥ 1.
 * @returns the quoted text, at most `max` characters plus the quotes and escapes.
 * @throws {RangeError} when `max` is not a whole number ≥ 1.
 */
export function quoted(value: string, max: number): string {
  return `"${preview(value, max).replace(QUOTE_LIKE, '\\$&')}"`;
}

/**
 * `\` and every character drawn as, or much like, a double quote: `"`, the
 * typographic and guillemet quotes (`“ ” „ ‟ « »`), the primes and modifier
 * letters that look like one (`″ ‶ ʺ ˮ ˝`), Hebrew gershayim (`״`), the CJK
 * and fullwidth ones (`〝 〞 〟 〃 ＂`), and the ornaments (`❝ ❞ ⹂`). Each is
 * escaped inside a quoted value, so that the only quote-like characters
 * without a `\` before them are the two around it.
 */
const QUOTE_LIKE =
  /["\\\u00ab\u00bb\u02ba\u02dd\u02ee\u05f4\u201c-\u201f\u2033\u2036\u275d\u275e\u2e42\u301d-\u301f\u3003\uff02]/g;

/**
 * One grapheme cluster, without code points past the 16th nor marks past the
 * 4th in a row. A cut that leaves part of a tag sequence (its CANCEL TAG
 * dropped) shows those tag characters as U+FFFD: only a whole sequence is kept.
 */
function oneCharacter(segment: string): string {
  const kept = capped(segment);
  return kept.length < segment.length && TAG.test(kept) ? hiddenReplaced(kept) : kept;
}

function capped(segment: string): string {
  if (segment.length === 1) return segment;
  let kept = '';
  let points = 0;
  let marks = 0;
  for (const point of segment) {
    if (points === MAX_UNITS_PER_CHARACTER) break;
    // CGJ is itself a mark (Mn): joiners are tested first, so that none counts.
    if (JOINER.test(point)) {
      // neither counts nor ends the run
    } else if (MARK.test(point)) marks++;
    else marks = 0;
    if (marks > MAX_MARKS_IN_A_ROW) continue;
    kept += point;
    points++;
  }
  return kept;
}

let cached: Intl.Segmenter | undefined;
function segmenter(): Intl.Segmenter {
  cached ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return cached;
}
