import { ErrorCode, McpError, shownText } from '@mrtr/wire';
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';

/** An argument schema: Standard Schema for validation and Standard JSON Schema for `inputSchema` (zod 4 is both). */
export type ArgsSchema<Args> = StandardSchemaV1<unknown, Args> &
  StandardJSONSchemaV1<unknown, Args>;

/** A tool's `inputSchema`: a JSON Schema object. */
export type InputSchema = { type: 'object'; [key: string]: unknown };

/** The tool's `inputSchema`: the Standard JSON Schema of its arguments, closed to undeclared properties. */
export function objectSchema(declaration: {
  name: string;
  args: StandardJSONSchemaV1;
}): InputSchema {
  const { $schema: _dialect, ...schema } = declaration.args['~standard'].jsonSchema.input({
    target: 'draft-2020-12',
  });
  if (schema.type !== 'object')
    throw new TypeError(`gated tool ${declaration.name}: args must be an object schema`);
  if (schema.additionalProperties === undefined) schema.additionalProperties = false;
  return schema as InputSchema;
}

export function parseArgs<Args>(
  declaration: { name: string; args: StandardSchemaV1<unknown, Args> },
  declared: ReadonlySet<string>,
  raw: unknown,
): Args {
  // Worded as the spec's own example of -32602 ("Invalid arguments for tool calculate: …"),
  // with the argument named in `data` as @mrtr/server names it for a schema violation.
  const invalid = (argument: string, problem: string) =>
    new McpError(
      ErrorCode.InvalidParams,
      `Invalid arguments for tool ${declaration.name}: ${argument ? `${argument}: ` : ''}${problem}`,
      argument ? { argument, problem } : { problem },
    );
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const name of Object.keys(raw))
      if (!declared.has(name))
        throw invalid(shownText(name, 64), 'is not an argument of this tool');
  }
  const result = declaration.args['~standard'].validate(raw);
  if (result instanceof Promise)
    throw new TypeError(`gated tool ${declaration.name}: argument validation must be synchronous`);
  if (result.issues) {
    const issue = result.issues[0];
    const path = (issue?.path ?? [])
      .map((p) => String(typeof p === 'object' ? p.key : p))
      .join('.');
    throw invalid(shownText(path, 200), shownText(issue?.message ?? 'is invalid', 200));
  }
  // The output, not the input: a schema that coerces or transforms can make a -0 of its own.
  return withoutNegativeZero(result.value) as Args;
}

/** Deepest value {@link withoutNegativeZero} walks: `canonicalize`'s own limit, past which the gate refuses. */
const MAX_WALK_DEPTH = 1000;

/**
 * `value` with every `-0` in it made `0`, copied only where one is found:
 * arrays and plain objects (prototype `Object.prototype` or `null`) are
 * walked, anything else (a `Date`, a class instance) is left as it is. The
 * ticket binds the RFC 8785 text of the arguments, which writes both as `0`
 * (§3.2.2.3): a retry sending `-0` where `0` was confirmed opens the same
 * ticket, and the tool must not act on a value the question never showed
 * (`1 / -0` is `-Infinity`, `Object.is(-0, 0)` false). The value given is
 * never changed, frozen or not.
 */
export function withoutNegativeZero(value: unknown, depth = 0): unknown {
  if (value === 0) return 0;
  if (value === null || typeof value !== 'object' || depth > MAX_WALK_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = withoutNegativeZero(value[i], depth + 1);
      if (!Object.is(item, value[i])) {
        copy ??= value.slice();
        copy[i] = item;
      }
    }
    return copy ?? value;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key];
    const fixed = withoutNegativeZero(member, depth + 1);
    if (!Object.is(fixed, member)) {
      copy ??= plainCopy(value as Record<string, unknown>, proto as object | null);
      define(copy, key, fixed);
    }
  }
  return copy ?? value;
}

/** A writable copy of `value`'s own enumerable properties as data (an own `__proto__` stays own). */
function plainCopy(value: Record<string, unknown>, proto: object | null): Record<string, unknown> {
  const copy = Object.create(proto) as Record<string, unknown>;
  for (const key of Object.keys(value)) define(copy, key, value[key]);
  return copy;
}

function define(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
