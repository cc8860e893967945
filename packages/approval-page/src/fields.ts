/**
 * The fields of an approval's `requestedSchema` (the flat form subset of
 * MCP 2026-07-28 `client/elicitation`) as HTML inputs on the page, and the
 * posted form read back into `content` for `validateFormContent`.
 */
import type { FormValue, PrimitiveSchemaDefinition, RequestedSchema } from '@mrtr/wire';
import { field } from './http.js';
import { visible } from './visible.js';

/** One option of a choice: its value, label and whether it is selected. */
interface Option {
  value: string;
  label: string;
  checked: boolean;
}

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

function optionsOf(def: PrimitiveSchemaDefinition): { value: string; label: string }[] | undefined {
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
    const value = values ? values[name] : def.default;
    const options = optionsOf(def);
    const chosen = Array.isArray(value) ? value.map(String) : [String(value ?? '')];
    const multi = def.type === 'array';
    const shownValue = value === undefined || typeof value === 'boolean' ? '' : String(value);
    return {
      name,
      id: `field-${index}`,
      label: def.title ?? name,
      description: def.description ?? null,
      required: (schema.required ?? []).includes(name),
      isChoice: options !== undefined && !multi,
      isMulti: multi,
      isBoolean: def.type === 'boolean',
      isNumber: def.type === 'number' || def.type === 'integer',
      isText: def.type === 'string' && options === undefined,
      options: (options ?? []).map((o) => ({ ...o, checked: chosen.includes(o.value) })),
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
      error: errors[name] ?? null,
    };
  });
}

/**
 * Read the posted fields of `schema` into `content`: a multi-select is every
 * value given; a checkbox is `true` when sent, else `false`; a number is
 * `Number(text)` (left as text when it is not one, so validation names it);
 * an empty or repeated single field is absent. Nothing else is read.
 */
export function readContent(schema: RequestedSchema | undefined, form: URLSearchParams) {
  const content: Record<string, FormValue> = {};
  for (const [name, def] of Object.entries(schema?.properties ?? {})) {
    if (def.type === 'array') {
      const all = form.getAll(name);
      if (all.length > 0) content[name] = all;
      continue;
    }
    if (def.type === 'boolean') {
      content[name] = field(form, name) === 'true';
      continue;
    }
    const raw = field(form, name);
    if (raw === undefined || raw === '') continue;
    const number = Number(raw);
    content[name] = def.type === 'string' || !Number.isFinite(number) ? raw : number;
  }
  return content;
}
