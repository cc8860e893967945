import {
  type PrimitiveSchemaDefinition,
  type RequestedSchema,
  RequestedSchemaSchema,
  validateFormContent,
} from './form.js';

/**
 * Builders of the form-mode `requestedSchema` subset (MCP 2026-07-28,
 * `client/elicitation`, "Supported Schema Types"). Each builder checks what
 * the type cannot: bounds in order, options unique and non-empty, a default
 * that the field itself accepts. A mistake throws a `TypeError` naming the
 * field when the form is assembled by {@link formSchema}, never at answer time.
 */

/** Title and description shown to the person. */
interface Labels {
  title?: string;
  description?: string;
}

/** An option of a titled enum: the value sent back (`const`) and what the person sees (`title`). */
export interface TitledOption {
  const: string;
  title: string;
}

// `...{}` first in the copies below: V8 (Node 20) clones a leading spread's shape with no room to
// grow, and a copy that then takes a property is promoted to the old generation (forms are built
// per request).
function labelled<T extends object>(base: T, labels: Labels): T {
  const out = { ...{}, ...base } as Record<string, unknown>;
  if (labels.title !== undefined) out.title = labels.title;
  if (labels.description !== undefined) out.description = labels.description;
  return out as T;
}

function withDefault<T extends object>(base: T, value: unknown): T {
  return value === undefined ? base : { ...{}, ...base, default: value };
}

function checkOptions(options: readonly (string | TitledOption)[]): void {
  if (options.length === 0) throw new TypeError('an enum needs at least one option');
  const values = options.map((o) => (typeof o === 'string' ? o : o.const));
  if (new Set(values).size !== values.length) throw new TypeError('enum options must be unique');
}

/** Field builders; pass their results to {@link formSchema}. */
export const field = {
  /**
   * `StringSchema`: text, optionally `minLength`/`maxLength` (code points) and
   * one `format` (`email`, `uri`, `date`, `date-time`).
   */
  string(
    options: Labels & {
      minLength?: number;
      maxLength?: number;
      format?: 'email' | 'uri' | 'date' | 'date-time';
      default?: string;
    } = {},
  ): PrimitiveSchemaDefinition {
    const { minLength, maxLength, format } = options;
    if (minLength !== undefined && maxLength !== undefined && minLength > maxLength)
      throw new TypeError(`minLength ${minLength} exceeds maxLength ${maxLength}`);
    const schema: Record<string, unknown> = { type: 'string' };
    if (minLength !== undefined) schema.minLength = minLength;
    if (maxLength !== undefined) schema.maxLength = maxLength;
    if (format !== undefined) schema.format = format;
    return withDefault(labelled(schema, options), options.default) as PrimitiveSchemaDefinition;
  },

  /** `NumberSchema` with `type: "number"`: any finite number within inclusive `minimum`/`maximum`. */
  number(
    options: Labels & { minimum?: number; maximum?: number; default?: number } = {},
  ): PrimitiveSchemaDefinition {
    return numeric('number', options);
  },

  /** `NumberSchema` with `type: "integer"`. */
  integer(
    options: Labels & { minimum?: number; maximum?: number; default?: number } = {},
  ): PrimitiveSchemaDefinition {
    return numeric('integer', options);
  },

  /** `BooleanSchema`. A `default` is shown pre-filled; it is never read as consent. */
  boolean(options: Labels & { default?: boolean } = {}): PrimitiveSchemaDefinition {
    return withDefault(
      labelled({ type: 'boolean' as const }, options),
      options.default,
    ) as PrimitiveSchemaDefinition;
  },

  /**
   * A single-select enum: plain strings give `UntitledSingleSelectEnumSchema`
   * (`enum`), `{const, title}` options give `TitledSingleSelectEnumSchema` (`oneOf`).
   */
  select(
    options: readonly string[] | readonly TitledOption[],
    labels: Labels & { default?: string } = {},
  ): PrimitiveSchemaDefinition {
    checkOptions(options);
    const base =
      typeof options[0] === 'string'
        ? { type: 'string', enum: [...(options as readonly string[])] }
        : {
            type: 'string',
            oneOf: (options as readonly TitledOption[]).map((o) => ({
              const: o.const,
              title: o.title,
            })),
          };
    return withDefault(labelled(base, labels), labels.default) as PrimitiveSchemaDefinition;
  },

  /**
   * A multi-select enum (`type: "array"`): plain strings give
   * `UntitledMultiSelectEnumSchema` (`items.enum`), `{const, title}` options
   * give `TitledMultiSelectEnumSchema` (`items.anyOf`); `minItems`/`maxItems` bound the choice.
   */
  multiSelect(
    options: readonly string[] | readonly TitledOption[],
    labels: Labels & { minItems?: number; maxItems?: number; default?: string[] } = {},
  ): PrimitiveSchemaDefinition {
    checkOptions(options);
    const { minItems, maxItems } = labels;
    if (minItems !== undefined && maxItems !== undefined && minItems > maxItems)
      throw new TypeError(`minItems ${minItems} exceeds maxItems ${maxItems}`);
    const items =
      typeof options[0] === 'string'
        ? { type: 'string', enum: [...(options as readonly string[])] }
        : {
            anyOf: (options as readonly TitledOption[]).map((o) => ({
              const: o.const,
              title: o.title,
            })),
          };
    const schema: Record<string, unknown> = { type: 'array', items };
    if (minItems !== undefined) schema.minItems = minItems;
    if (maxItems !== undefined) schema.maxItems = maxItems;
    return withDefault(labelled(schema, labels), labels.default) as PrimitiveSchemaDefinition;
  },
};

function numeric(
  type: 'number' | 'integer',
  options: Labels & { minimum?: number; maximum?: number; default?: number },
): PrimitiveSchemaDefinition {
  const { minimum, maximum } = options;
  for (const [name, v] of [
    ['minimum', minimum],
    ['maximum', maximum],
  ] as const) {
    if (v !== undefined && !Number.isFinite(v)) throw new TypeError(`${name} must be finite`);
  }
  if (minimum !== undefined && maximum !== undefined && minimum > maximum)
    throw new TypeError(`minimum ${minimum} exceeds maximum ${maximum}`);
  const schema: Record<string, unknown> = { type };
  if (minimum !== undefined) schema.minimum = minimum;
  if (maximum !== undefined) schema.maximum = maximum;
  return withDefault(labelled(schema, options), options.default) as PrimitiveSchemaDefinition;
}

/**
 * Assemble a form-mode `requestedSchema` from {@link field} builders.
 *
 * @param properties field name → field (the order is the order shown)
 * @param options `required`: names the person must answer; each must be a field
 * @returns a `requestedSchema` that {@link RequestedSchemaSchema} accepts
 * @throws TypeError naming the field when a `required` name is not a field,
 *   a field is outside the subset, or a field's `default` is not a valid answer to it
 *
 * @example
 * ```ts
 * import { field, formSchema } from '@mrtr/wire';
 *
 * const ids = ['note-1', 'note-2'];
 * const requestedSchema = formSchema(
 *   { note_id: field.select(ids, { title: 'Note to delete' }), confirm: field.boolean({ title: 'Yes, delete it' }) },
 *   { required: ['note_id', 'confirm'] },
 * );
 * ```
 */
export function formSchema(
  properties: Record<string, PrimitiveSchemaDefinition>,
  options: { required?: readonly string[] } = {},
): RequestedSchema {
  const required = [...(options.required ?? [])];
  for (const name of required) {
    if (!Object.hasOwn(properties, name))
      throw new TypeError(`required field "${name}" is not a field of this form`);
  }
  if (new Set(required).size !== required.length)
    throw new TypeError('a required field is named twice');
  const parsed = RequestedSchemaSchema.safeParse({
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
  });
  if (!parsed.success) {
    const path = parsed.error.issues[0]?.path.join('.') ?? '';
    throw new TypeError(`field outside the form subset at ${path}`);
  }
  const schema = parsed.data;
  for (const [name, definition] of Object.entries(schema.properties)) {
    const value = (definition as { default?: unknown }).default;
    if (value === undefined) continue;
    const single: RequestedSchema = { type: 'object', properties: { [name]: definition } };
    const check = validateFormContent(single, { [name]: value });
    if (!check.ok)
      throw new TypeError(`default of "${name}" ${check.issues[0]?.reason ?? 'is invalid'}`);
  }
  return schema;
}
