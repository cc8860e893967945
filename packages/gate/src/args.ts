import { ErrorCode, McpError } from '@mrtr/wire';
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
  const invalid = (where: string, why: string) =>
    new McpError(
      ErrorCode.InvalidParams,
      `Invalid arguments for ${declaration.name}: ${where}${why}`,
    );
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const name of Object.keys(raw))
      if (!declared.has(name))
        throw invalid(`"${name.slice(0, 64).toWellFormed()}": `, 'not an argument of this tool');
  }
  const result = declaration.args['~standard'].validate(raw);
  if (result instanceof Promise)
    throw new TypeError(`gated tool ${declaration.name}: argument validation must be synchronous`);
  if (result.issues) {
    const issue = result.issues[0];
    const path = (issue?.path ?? [])
      .map((p) => String(typeof p === 'object' ? p.key : p))
      .join('.');
    throw invalid(path ? `${path}: ` : '', issue?.message ?? 'invalid');
  }
  return result.value;
}
