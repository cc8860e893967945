/**
 * The fields of an approval's `requestedSchema` (the flat form subset of
 * MCP 2026-07-28 `client/elicitation`) as HTML inputs on the page, and the
 * posted form read back into `content` for `validateFormContent`.
 *
 * Nothing of the question travels through the browser's form but the
 * person's own typing: inputs are named by the field's position (`f0`,
 * `f1`, …) and options carry their position as value (`0`, `1`, …), read
 * back into the question's own names and values here. A browser rewrites
 * what it parses and posts (CR and CRLF become LF and then CRLF, NUL
 * becomes U+FFFD, a lone surrogate another character), so an option value
 * or a field name that went through it could come back as another option's
 * value, and the page would record a choice the person did not make.
 */
import type { FormValue, PrimitiveSchemaDefinition, RequestedSchema } from '@mrtr/wire';
import { field } from './http.js';
import { visible } from './visible.js';

/** One option of a choice: its position (the posted value), label and whether it is selected. */
interface Option {
  value: string;
  label: string;
  checked: boolean;
}

/** The input name of the field at `index` of the schema's properties. */
const inputName = (index: number) => `f${index}`;

/** What the template needs to render one field (every key present: the templates run in strict mode). */
export interface FieldView {
  name: string;
  id: string;
  label: string;
  description: string | null;
  required: boolean;
  isChoice: boolean;
  isMulti: boolean;
  isBoolean: boolean;
  isNumber: boolean;
  isText: boolean;
  options: Option[];
  value: string;
  /** {@link value} with what does not show spelled out as codes, when it holds any; else `null`. */
  valueCodes: string | null;
  checked: boolean;
  inputType: string;
  step: string;
  min: string | null;
  max: string | null;
  minLength: string | null;
  maxLength: string | null;
  error: string | null;
}

const INPUT_TYPES: Record<string, string> = { email: 'email', uri: 'url', date: 'date' };

/** The options of a choice field, in the question's order: their values and labels. */
export function optionsOf(
  def: PrimitiveSchemaDefinition,
): { value: string; label: string }[] | undefined {
  if ('oneOf' in def) return def.oneOf.map((o) => ({ value: o.const, label: o.title }));
  if ('enum' in def)
    return def.enum.map((value, i) => ({ value, label: def.enumNames?.[i] ?? value }));
  if ('items' in def)
    return 'anyOf' in def.items
      ? def.items.anyOf.map((o) => ({ value: o.const, label: o.title }))
      : def.items.enum.map((value) => ({ value, label: value }));
  return undefined;
}

const text = (v: unknown) => (v === undefined || v === null ? null : String(v));

/**
 * The view of every field of `schema`, filled with `values` (what was posted,
 * or the schema's defaults) and `errors` by field name.
 */
export function fieldViews(
  schema: RequestedSchema | undefined,
  values: Record<string, unknown> | undefined,
  errors: Record<string, string> = {},
): FieldView[] {
  if (!schema) return [];
  return Object.entries(schema.properties).map(([name, def], index) => {
    // Own members only: a field named `constructor` must not read Object.prototype's.
    const value = values ? (Object.hasOwn(values, name) ? values[name] : undefined) : def.default;
    const options = optionsOf(def);
    const chosen = Array.isArray(value) ? value.map(String) : [String(value ?? '')];
    const multi = def.type === 'array';
    const shownValue = value === undefined || typeof value === 'boolean' ? '' : String(value);
    return {
      name: inputName(index),
      id: `field-${index}`,
      label: def.title ?? name,
      description: def.description ?? null,
      required: (schema.required ?? []).includes(name),
      isChoice: options !== undefined && !multi,
      isMulti: multi,
      isBoolean: def.type === 'boolean',
      isNumber: def.type === 'number' || def.type === 'integer',
      isText: def.type === 'string' && options === undefined,
      options: (options ?? []).map((o, i) => ({
        value: String(i),
        label: o.label,
        checked: chosen.includes(o.value),
      })),
      value: shownValue,
      // The box shows the value as it is (an answer must be what the question allows): what
      // does not show in it is spelled out beside it.
      valueCodes: visible(shownValue) === shownValue ? null : visible(shownValue),
      checked: value === true,
      inputType: 'format' in def && def.format ? (INPUT_TYPES[def.format] ?? 'text') : 'text',
      step: def.type === 'integer' ? '1' : 'any',
      min: text('minimum' in def ? def.minimum : undefined),
      max: text('maximum' in def ? def.maximum : undefined),
      minLength: text('minLength' in def ? def.minLength : undefined),
      maxLength: text('maxLength' in def ? def.maxLength : undefined),
      error: Object.hasOwn(errors, name) ? (errors[name] ?? null) : null,
    };
  });
}

/** The value of the hidden `form` field of this page's forms: which way its inputs are posted. */
export const FORM_LAYOUT = 'positions-1';

/** What {@link readContent} read of a posted form. */
export interface PostedContent {
  /** The answers, under the question's own property names and values. */
  content: Record<string, FormValue>;
  /** Why a field could not be read, by property name: a position that names no option. */
  unreadable: Record<string, string>;
  /**
   * Whether the form says it was made by this page's layout (`form` =
   * {@link FORM_LAYOUT}): a page rendered by an earlier version of the server
   * posts property names, which this one would read as fields left empty.
   */
  current: boolean;
}

/**
 * Read the posted fields of `schema` (inputs named by position, options
 * posted as positions: see above): a multi-select is every option given; a
 * checkbox is `true` when sent, else `false`; a number is `Number(text)`
 * (left as text when it is not one, so validation names it); an empty or
 * repeated single field is absent. A position that names no option of its
 * field (out of range, `01`, ` 1`) is `unreadable` and its field absent:
 * never read as a value, which could be another option's. Nothing else is read.
 */
export function readContent(
  schema: RequestedSchema | undefined,
  form: URLSearchParams,
): PostedContent {
  const content: Record<string, FormValue> = {};
  const unreadable: Record<string, string> = {};
  for (const [index, [name, def]] of Object.entries(schema?.properties ?? {}).entries()) {
    const posted = inputName(index);
    const options = optionsOf(def);
    if (options) {
      const given = def.type === 'array' ? form.getAll(posted) : [field(form, posted)];
      const chosen: string[] = [];
      for (const at of given) {
        if (at === undefined) continue;
        const option = /^(0|[1-9]\d{0,5})$/.test(at) ? options[Number(at)] : undefined;
        if (option) chosen.push(option.value);
        else unreadable[name] = 'is not one of the offered choices';
      }
      if (unreadable[name] !== undefined) continue;
      if (def.type === 'array') {
        if (chosen.length > 0) content[name] = chosen;
      } else if (chosen[0] !== undefined) content[name] = chosen[0];
      continue;
    }
    if (def.type === 'boolean') {
      content[name] = field(form, posted) === 'true';
      continue;
    }
    const raw = field(form, posted);
    if (raw === undefined || raw === '') continue;
    const number = Number(raw);
    content[name] = def.type === 'string' || !Number.isFinite(number) ? raw : number;
  }
  return { content, unreadable, current: field(form, 'form') === FORM_LAYOUT };
}
