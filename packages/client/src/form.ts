import { type RequestedSchema, RequestedSchemaSchema, shownText } from '@mrtr/wire';
import { quoted } from './errors.js';

/** The outcome of {@link checkRenderable}. */
export type Renderable = { ok: true; schema: RequestedSchema } | { ok: false; reasons: string[] };

const ANNOTATIONS = ['title', 'description', 'default', '$comment'];
/** The keywords each field kind may carry (`client/elicitation`, "Requested Schema"). */
const FIELD_KEYWORDS: Record<string, string[]> = {
  string: ['type', 'minLength', 'maxLength', 'format', ...ANNOTATIONS],
  enum: ['type', 'enum', 'enumNames', ...ANNOTATIONS],
  oneOf: ['type', 'oneOf', ...ANNOTATIONS],
  number: ['type', 'minimum', 'maximum', ...ANNOTATIONS],
  boolean: ['type', ...ANNOTATIONS],
  array: ['type', 'items', 'minItems', 'maxItems', ...ANNOTATIONS],
};
const TOP_KEYWORDS = [
  '$schema',
  'type',
  'properties',
  'required',
  'title',
  'description',
  '$comment',
];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Multi-select `items`: `{type: "string", enum}` or `{anyOf: [{const, title}]}`, nothing else. */
function isOptionList(items: unknown): boolean {
  if (!isObject(items)) return false;
  const keys = Object.keys(items).sort().join();
  if (keys === 'enum,type') return items.type === 'string' && Array.isArray(items.enum);
  return keys === 'anyOf' && Array.isArray(items.anyOf);
}

function kindOf(field: Record<string, unknown>): string | undefined {
  switch (field.type) {
    case 'string':
      return 'enum' in field ? 'enum' : 'oneOf' in field ? 'oneOf' : 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
    case 'array':
      return field.type;
    default:
      return undefined;
  }
}

/**
 * Most fields a form may have for {@link checkRenderable} to accept it: a
 * person answers each one, and a server asking hundreds of thousands would
 * hold the client in checks (seconds) and the person in prompts.
 */
export const MAX_FORM_FIELDS = 100;

/**
 * Most choices one field may offer for {@link checkRenderable} to accept it:
 * nobody reads more, and three million took a terminal client seconds to
 * draw.
 */
export const MAX_FIELD_CHOICES = 1000;

/**
 * The longest list of choices a field holds (`enum`, `oneOf`, `enumNames`, a
 * multi-select's `items` and `default`), 0 for none: every one is read per
 * choice when the field is drawn.
 */
function choiceCount(field: Record<string, unknown>): number {
  const items = isObject(field.items) ? field.items : {};
  let most = 0;
  for (const list of [
    field.enum,
    field.oneOf,
    field.enumNames,
    field.default,
    items.enum,
    items.anyOf,
  ])
    if (Array.isArray(list)) most = Math.max(most, list.length);
  return most;
}

/** Most reasons {@link checkRenderable} gives; more are counted in one last reason. */
const MAX_REASONS = 10;

/**
 * Whether a form-mode `requestedSchema` can be drawn faithfully as a flat
 * form: an object whose properties are each a string, number, integer,
 * boolean, single-select or multi-select enum of the 2026-07-28 subset
 * (`client/elicitation`, "Requested Schema"), with no keyword the form could
 * not enforce (`pattern`, nested `properties`, `anyOf` at field level, …)
 * and every `required` name among the properties, at most
 * {@link MAX_FORM_FIELDS} of them. A client must not show
 * half a form: anything else is declined without asking.
 *
 * @param schema the `requestedSchema` as received (any value)
 * @returns `{ok: true, schema}` typed, or `{ok: false, reasons}` naming each problem (at most
 *   ten, then how many more), names quoted JSON-escaped and clipped. Never throws.
 */
export function checkRenderable(schema: unknown): Renderable {
  if (!isObject(schema)) return { ok: false, reasons: ['the requestedSchema is not an object'] };
  const reasons: string[] = [];
  for (const key of Object.keys(schema)) {
    if (key === 'additionalProperties' && schema[key] === false) continue;
    if (!TOP_KEYWORDS.includes(key))
      reasons.push(`the form uses ${quoted(key)}, which a flat form cannot show`);
  }
  if (schema.type !== 'object') reasons.push('the requestedSchema is not of type "object"');
  const properties = schema.properties;
  if (!isObject(properties)) {
    reasons.push('the requestedSchema has no properties object');
  } else if (Object.keys(properties).length > MAX_FORM_FIELDS) {
    reasons.push(
      `the form has ${Object.keys(properties).length} fields; this client shows at most ${MAX_FORM_FIELDS}`,
    );
  } else {
    for (const [name, field] of Object.entries(properties)) {
      if (!isObject(field)) {
        reasons.push(`field ${quoted(name)} is not a schema object`);
        continue;
      }
      const kind = kindOf(field);
      if (!kind) {
        reasons.push(
          `field ${quoted(name)} has type ${quoted(field.type)}, which a flat form cannot show`,
        );
        continue;
      }
      for (const key of Object.keys(field)) {
        if (!(FIELD_KEYWORDS[kind] as string[]).includes(key))
          reasons.push(`field ${quoted(name)} uses ${quoted(key)}, which this form cannot enforce`);
      }
      if (choiceCount(field) > MAX_FIELD_CHOICES)
        reasons.push(
          `field ${quoted(name)} lists ${choiceCount(field)} choices; this client shows at most ${MAX_FIELD_CHOICES}`,
        );
      if (kind === 'array' && !isOptionList(field.items)) {
        reasons.push(`field ${quoted(name)} is a list of something other than offered strings`);
      }
    }
    const required = schema.required;
    if (required !== undefined) {
      if (!Array.isArray(required)) reasons.push('"required" is not a list');
      else
        for (const r of required) {
          if (typeof r !== 'string' || !Object.hasOwn(properties, r))
            reasons.push(`required field ${quoted(r)} is not among the properties`);
        }
    }
  }
  // A schema of thousands of unknown keywords would make as many reasons: the first few say enough.
  if (reasons.length > MAX_REASONS)
    return {
      ok: false,
      reasons: [...reasons.slice(0, MAX_REASONS), `and ${reasons.length - MAX_REASONS} more`],
    };
  if (reasons.length > 0) return { ok: false, reasons };
  // The keyword check passed; the wire schema checks every value's type.
  const parsed = RequestedSchemaSchema.safeParse(schema);
  if (!parsed.success) {
    const issues = parsed.error.issues;
    const reasons = issues
      .slice(0, MAX_REASONS)
      .map(
        (i) =>
          `${i.path.length ? `field ${i.path.slice(1).map(quoted).join('.')}` : 'the form'}: ${shownText(i.message, 200)}`,
      );
    if (issues.length > MAX_REASONS) reasons.push(`and ${issues.length - MAX_REASONS} more`);
    return { ok: false, reasons };
  }
  // The answerer is shown the parsed copy: it must be the form as sent. Zod keeps a `__proto__`
  // member of a record as the copy's prototype, and a choice whose options are not strings parses as
  // free text with its options stripped: either would be half a form, answered as another one.
  const changed = Object.keys(properties as Record<string, unknown>).filter(
    (name) =>
      !Object.hasOwn(parsed.data.properties, name) ||
      !sameField((properties as Record<string, unknown>)[name], parsed.data.properties[name]),
  );
  if (Object.getPrototypeOf(parsed.data.properties) !== Object.prototype)
    changed.unshift('__proto__');
  if (changed.length > 0)
    return {
      ok: false,
      reasons: [...new Set(changed)]
        .slice(0, MAX_REASONS)
        .map(
          (name) =>
            `field ${quoted(name)} cannot be shown as sent (no field kind of the form schema reads it whole)`,
        ),
    };
  const unanswerable = Object.entries(properties as Record<string, Record<string, unknown>>)
    .map(([name, field]) => answerProblem(name, field))
    .filter((r): r is string => r !== undefined);
  if (unanswerable.length > 0) return { ok: false, reasons: unanswerable.slice(0, MAX_REASONS) };
  return { ok: true, schema: parsed.data };
}

/**
 * Why no answer, or no faithful showing, fits a field the schema accepts
 * (helper-163 L14): a choice of no options, bounds out of order, labels
 * (`enumNames`) that are not one per option, a default that is not offered.
 */
function answerProblem(name: string, field: Record<string, unknown>): string | undefined {
  const items = isObject(field.items) ? field.items : {};
  const options = [field.enum, field.oneOf, items.enum, items.anyOf].find(Array.isArray);
  const n = quoted(name);
  if (options !== undefined && options.length === 0) return `field ${n} offers no choice`;
  for (const [low, high] of [
    ['minLength', 'maxLength'],
    ['minimum', 'maximum'],
    ['minItems', 'maxItems'],
  ] as const) {
    const lo = field[low];
    const hi = field[high];
    if (typeof lo === 'number' && typeof hi === 'number' && lo > hi)
      return `field ${n} has ${low} above ${high}: no answer fits`;
  }
  if (
    typeof field.minItems === 'number' &&
    options !== undefined &&
    field.minItems > options.length
  )
    return `field ${n} asks for more choices than it offers: no answer fits`;
  if (Array.isArray(field.enumNames) && Array.isArray(field.enum))
    if (field.enumNames.length !== field.enum.length)
      return `field ${n} has ${field.enumNames.length} labels for ${field.enum.length} options`;
  if (field.default !== undefined && options !== undefined) {
    const values = options.map((o) => (isObject(o) ? o.const : o));
    const defaults = Array.isArray(field.default) ? field.default : [field.default];
    if (defaults.some((d) => !values.includes(d)))
      return `field ${n} has a default that is not among its choices`;
  }
  return undefined;
}

/**
 * Whether a field as parsed holds exactly the field as received, but the
 * `$comment` annotation (which no form shows): same members, same values.
 */
function sameField(received: unknown, parsed: unknown): boolean {
  if (!isObject(received) || !isObject(parsed)) return false;
  const keys = Object.keys(received).filter((k) => k !== '$comment');
  return (
    keys.length === Object.keys(parsed).length &&
    keys.every((k) => Object.hasOwn(parsed, k) && sameJson(received[k], parsed[k]))
  );
}

/** Deep equality of two JSON values (a field's members: a few levels at most, the keyword check saw to that). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (!isObject(a) || !isObject(b) || Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]))
  );
}
