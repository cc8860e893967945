import { z } from 'zod';

/**
 * The flat form-mode `requestedSchema` subset of `elicitation/create`
 * (MCP 2026-07-28, `client/elicitation`, "Supported Schema Types"):
 * an object whose properties are primitives or enums, without nesting.
 */

const titled = { title: z.string().optional(), description: z.string().optional() };
const TitledOptionSchema = z.object({ const: z.string(), title: z.string() });

/** `StringSchema`: text with optional length bounds and one of four formats. */
export const StringSchemaSchema = z.object({
  type: z.literal('string'),
  ...titled,
  minLength: z.number().int().nonnegative().optional(),
  maxLength: z.number().int().nonnegative().optional(),
  format: z.enum(['email', 'uri', 'date', 'date-time']).optional(),
  default: z.string().optional(),
});
/** `NumberSchema`: a number or integer with optional inclusive bounds. */
export const NumberSchemaSchema = z.object({
  type: z.enum(['number', 'integer']),
  ...titled,
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  default: z.number().optional(),
});
/** `BooleanSchema`. */
export const BooleanSchemaSchema = z.object({
  type: z.literal('boolean'),
  ...titled,
  default: z.boolean().optional(),
});
/** `UntitledSingleSelectEnumSchema` (and the legacy `enumNames` form). */
export const UntitledSingleSelectEnumSchemaSchema = z.object({
  type: z.literal('string'),
  ...titled,
  enum: z.array(z.string()),
  enumNames: z.array(z.string()).optional(),
  default: z.string().optional(),
});
/** `TitledSingleSelectEnumSchema`: options given as `oneOf: [{const, title}]`. */
export const TitledSingleSelectEnumSchemaSchema = z.object({
  type: z.literal('string'),
  ...titled,
  oneOf: z.array(TitledOptionSchema),
  default: z.string().optional(),
});
const multi = {
  type: z.literal('array'),
  ...titled,
  minItems: z.number().int().nonnegative().optional(),
  maxItems: z.number().int().nonnegative().optional(),
  default: z.array(z.string()).optional(),
};
/** `UntitledMultiSelectEnumSchema`: `items: {type: "string", enum}`. */
export const UntitledMultiSelectEnumSchemaSchema = z.object({
  ...multi,
  items: z.object({ type: z.literal('string'), enum: z.array(z.string()) }),
});
/** `TitledMultiSelectEnumSchema`: `items: {anyOf: [{const, title}]}`. */
export const TitledMultiSelectEnumSchemaSchema = z.object({
  ...multi,
  items: z.object({ anyOf: z.array(TitledOptionSchema) }),
});

/** `PrimitiveSchemaDefinition`: one field of a form. */
export const PrimitiveSchemaDefinitionSchema = z.union([
  UntitledSingleSelectEnumSchemaSchema,
  TitledSingleSelectEnumSchemaSchema,
  StringSchemaSchema,
  NumberSchemaSchema,
  BooleanSchemaSchema,
  UntitledMultiSelectEnumSchemaSchema,
  TitledMultiSelectEnumSchemaSchema,
]);
/** One field of a form-mode `requestedSchema`. */
export type PrimitiveSchemaDefinition = z.infer<typeof PrimitiveSchemaDefinitionSchema>;

/** The `requestedSchema` of a form-mode `elicitation/create`. */
export const RequestedSchemaSchema = z.object({
  $schema: z.string().optional(),
  type: z.literal('object'),
  properties: z.record(z.string(), PrimitiveSchemaDefinitionSchema),
  required: z.array(z.string()).optional(),
});
/** The `requestedSchema` of a form-mode `elicitation/create`. */
export type RequestedSchema = z.infer<typeof RequestedSchemaSchema>;

/** A value a form field may carry in `ElicitResult.content`. */
export type FormValue = string | number | boolean | string[];

/** Why one field of `content` failed {@link validateFormContent}. */
export interface FormIssue {
  /** The property name, or `""` for the content object as a whole. */
  field: string;
  /** A human-readable reason, safe to show to the person answering. */
  reason: string;
}

/** The outcome of {@link validateFormContent}. */
export type FormValidation =
  | { ok: true; value: Record<string, FormValue> }
  | { ok: false; issues: FormIssue[] };

/**
 * `local@domain.tld` as `/^[^\s@]+@[^\s@]+\.[^\s@]+$/` reads it: one `@` with
 * something before it, a `.` inside the domain with something on each side,
 * no white space. Written out: the pattern backtracks over every dot and
 * took time quadratic in the length (1.5 s for 40,000 characters).
 */
function isEmail(v: string): boolean {
  if (/\s/.test(v)) return false;
  const at = v.indexOf('@');
  if (at < 1 || at !== v.lastIndexOf('@')) return false;
  const dot = v.indexOf('.', at + 2);
  return dot !== -1 && dot < v.length - 1;
}
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** Whether the leading `YYYY-MM-DD` names a real day (`Date.parse` rolls 2023-02-29 over to March 1). */
function isCalendarDate(v: string): boolean {
  const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(0);
  date.setUTCFullYear(y, m - 1, d);
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

function enumOptions(field: PrimitiveSchemaDefinition): string[] | undefined {
  if ('enum' in field) return field.enum;
  if ('oneOf' in field) return field.oneOf.map((o) => o.const);
  return undefined;
}

function multiOptions(field: PrimitiveSchemaDefinition): string[] | undefined {
  if (field.type !== 'array') return undefined;
  return 'enum' in field.items ? field.items.enum : field.items.anyOf.map((o) => o.const);
}

function checkString(field: PrimitiveSchemaDefinition, v: string): string | undefined {
  const options = enumOptions(field);
  if (options) return options.includes(v) ? undefined : 'is not one of the offered choices';
  // PostgreSQL text, C strings and log lines cannot keep U+0000: a record of the answer would say
  // something else than the answer (a NUL made U+FFFD), so the person is asked again instead.
  if (v.includes('\u0000')) return 'must not contain U+0000 (NUL)';
  if (!('minLength' in field) && !('format' in field) && !('maxLength' in field)) return undefined;
  const s = field as z.infer<typeof StringSchemaSchema>;
  const length = [...v].length;
  if (s.minLength !== undefined && length < s.minLength)
    return `must be at least ${s.minLength} characters`;
  if (s.maxLength !== undefined && length > s.maxLength)
    return `must be at most ${s.maxLength} characters`;
  switch (s.format) {
    case 'email':
      return isEmail(v) ? undefined : 'must be an email address';
    case 'uri':
      return URL.canParse(v) ? undefined : 'must be an absolute URI';
    case 'date':
      return DATE.test(v) && isCalendarDate(v) && !Number.isNaN(Date.parse(v))
        ? undefined
        : 'must be a date (YYYY-MM-DD)';
    case 'date-time':
      return DATE_TIME.test(v) && isCalendarDate(v) && !Number.isNaN(Date.parse(v))
        ? undefined
        : 'must be an RFC 3339 date-time';
    default:
      return undefined;
  }
}

function checkField(field: PrimitiveSchemaDefinition, v: unknown): string | undefined {
  switch (field.type) {
    case 'string':
      return typeof v === 'string' ? checkString(field, v) : 'must be a string';
    case 'boolean':
      return typeof v === 'boolean' ? undefined : 'must be a boolean';
    case 'number':
    case 'integer': {
      if (typeof v !== 'number' || !Number.isFinite(v)) return 'must be a number';
      if (field.type === 'integer' && !Number.isInteger(v)) return 'must be an integer';
      if (field.minimum !== undefined && v < field.minimum) return `must be ≥ ${field.minimum}`;
      if (field.maximum !== undefined && v > field.maximum) return `must be ≤ ${field.maximum}`;
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
        return 'must be a list of strings';
      const options = multiOptions(field) ?? [];
      if (v.some((x) => !options.includes(x))) return 'contains a value that was not offered';
      if (new Set(v).size !== v.length) return 'contains a value twice';
      if (field.minItems !== undefined && v.length < field.minItems)
        return `must have at least ${field.minItems} choices`;
      if (field.maxItems !== undefined && v.length > field.maxItems)
        return `must have at most ${field.maxItems} choices`;
      return undefined;
    }
  }
}

/**
 * Validate `ElicitResult.content` of an `accept` against the form's
 * `requestedSchema`, as the server must do whatever the client claims to have
 * checked. Every required field must be present; no field outside the
 * schema is allowed (a client adding fields is answering another question);
 * free text must not hold U+0000, which no text record keeps as sent.
 *
 * @param schema the `requestedSchema` that was sent
 * @param content the `content` received; anything, including `undefined`
 * @returns `{ok: true, value}` with the content typed, or `{ok: false, issues}`
 *   naming each failing field and why. Never throws.
 */
export function validateFormContent(schema: RequestedSchema, content: unknown): FormValidation {
  if (content === null || typeof content !== 'object' || Array.isArray(content)) {
    return { ok: false, issues: [{ field: '', reason: 'content must be an object' }] };
  }
  const issues: FormIssue[] = [];
  const record = content as Record<string, unknown>;
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(record, name) || record[name] === undefined || record[name] === null)
      issues.push({ field: name, reason: 'is required' });
  }
  for (const [name, v] of Object.entries(record)) {
    // Own properties only: `toString` or `__proto__` must not pass as fields of every form.
    const field = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    if (!field) {
      issues.push({ field: name, reason: 'is not a field of this form' });
      continue;
    }
    // Absent, or a required field already reported; otherwise `null` fails the type check.
    if (v === undefined || (v === null && schema.required?.includes(name))) continue;
    const reason = checkField(field, v);
    if (reason) issues.push({ field: name, reason });
  }
  // A copy of the own members: a value read later (`content.confirm`) never comes from a prototype.
  return issues.length > 0
    ? { ok: false, issues }
    : { ok: true, value: Object.fromEntries(Object.entries(record)) as Record<string, FormValue> };
}

/**
 * The values a person may choose in an enum field, whatever its form
 * (`enum`, titled `oneOf`, or a multi-select's `items`); `[]` for a field
 * that is not an enum. Takes any value (a field as a client received it).
 */
export function fieldOptions(definition: unknown): string[] {
  const d = definition as
    | {
        enum?: unknown;
        oneOf?: { const: string }[];
        items?: { enum?: unknown; anyOf?: { const: string }[] };
      }
    | undefined;
  if (typeof d !== 'object' || d === null) return [];
  // An option that is no object (`oneOf: [null]`) has no value to offer: `undefined` stands for it.
  const constOf = (o: unknown) =>
    typeof o === 'object' && o !== null ? (o as { const?: string }).const : undefined;
  if (Array.isArray(d.enum)) return [...(d.enum as string[])];
  if (Array.isArray(d.oneOf)) return d.oneOf.map(constOf) as string[];
  const items = typeof d.items === 'object' && d.items !== null ? d.items : undefined;
  if (Array.isArray(items?.enum)) return [...(items.enum as string[])];
  if (Array.isArray(items?.anyOf)) return items.anyOf.map(constOf) as string[];
  return [];
}
