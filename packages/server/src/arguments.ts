/**
 * Argument validation of `tools/call` (`server/tools`, "Security
 * Considerations": servers MUST validate all tool inputs). Every tool's
 * `inputSchema` is compiled once, when the endpoint is created, with Ajv
 * (JSON Schema 2020-12 by default, draft-07 when `$schema` names it; `format`
 * is an annotation, as in 2020-12's default vocabulary); a call is checked
 * against it before the tool's own `parse`, its header parameters or its
 * handler see anything. A schema Ajv cannot compile (invalid, an unknown
 * dialect, a `$ref` it cannot resolve locally: nothing is ever fetched) fails
 * the endpoint's creation.
 */

import { clip, ErrorCode, McpError, shownText } from '@mrtr/wire';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
const DRAFT_2020_12 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

/** Ajv instances per dialect: strict off so annotations such as `x-mcp-header` are allowed. */
export interface SchemaCompiler {
  compile(toolName: string, schema: unknown): ValidateFunction;
}

/** One compiler per endpoint, so `$id`s of one endpoint's tools never meet another's. */
export function schemaCompiler(): SchemaCompiler {
  const options = { strict: false, allErrors: false, validateFormats: false } as const;
  let modern: Ajv2020 | undefined;
  let draft07: Ajv | undefined;
  return {
    compile(toolName, schema) {
      const dialect =
        schema !== null && typeof schema === 'object'
          ? (schema as { $schema?: unknown }).$schema
          : undefined;
      let ajv: Ajv | Ajv2020;
      if (dialect === undefined || (typeof dialect === 'string' && DRAFT_2020_12.test(dialect)))
        ajv = modern ??= new Ajv2020(options);
      else if (typeof dialect === 'string' && DRAFT_07.test(dialect))
        ajv = draft07 ??= new Ajv(options);
      else
        throw new TypeError(
          `tool ${toolName}: inputSchema dialect ${String(dialect)} is not supported (JSON Schema 2020-12 or draft-07)`,
        );
      try {
        return ajv.compile(schema as object);
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        throw new TypeError(`tool ${toolName}: inputSchema cannot be compiled: ${why}`);
      }
    },
  };
}

const MAX_NAME = 64;
const MAX_DETAIL = 200;

/** A JSON Pointer (RFC 6901) of argument keys as a dotted name, each key clipped. */
function argumentName(pointer: string, last?: unknown): string {
  const keys = pointer === '' ? [] : pointer.slice(1).split('/');
  if (last !== undefined) keys.push(String(last));
  const shown = keys.map((k) => shownText(k.replace(/~1/g, '/').replace(/~0/g, '~'), MAX_NAME));
  return clip(shown.join('.'), 4 * MAX_NAME);
}

function invalidArguments(tool: string, argument: string, problem: string): McpError {
  const message = `Invalid arguments for tool ${shownText(tool, MAX_NAME)}: ${argument ? `${argument} ` : ''}${problem}`;
  return new McpError(
    ErrorCode.InvalidParams,
    message,
    argument ? { argument, problem } : { problem },
  );
}

/** The `-32602` for the first schema violation Ajv reported: names the argument, never its value. */
export function schemaViolation(tool: string, error: ErrorObject | undefined): McpError {
  if (!error) return invalidArguments(tool, '', 'do not match the inputSchema');
  const params = error.params as { additionalProperty?: unknown; missingProperty?: unknown };
  if (error.keyword === 'additionalProperties' && params.additionalProperty !== undefined)
    return invalidArguments(
      tool,
      argumentName(error.instancePath, params.additionalProperty),
      'is not a declared argument',
    );
  if (error.keyword === 'required' && params.missingProperty !== undefined)
    return invalidArguments(
      tool,
      argumentName(error.instancePath, params.missingProperty),
      'is required',
    );
  // Ajv's messages describe the rule (`must be string`, `must NOT have more than 200 characters`), not the value.
  return invalidArguments(
    tool,
    argumentName(error.instancePath),
    shownText(error.message ?? 'is invalid', MAX_DETAIL),
  );
}

/**
 * The `-32602` for a `parse` that threw. A validation library's error with
 * `issues` (zod, Standard Schema) names the first issue's path; any other
 * error contributes its message, clipped.
 */
export function parseFailure(tool: string, error: unknown): McpError {
  // A parse that already speaks JSON-RPC (the gate names the argument itself) is passed on as is.
  if (error instanceof McpError && error.code === ErrorCode.InvalidParams) return error;
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (Array.isArray(issues) && issues.length > 0) {
    const first = issues[0] as { path?: unknown; message?: unknown };
    const path = Array.isArray(first.path)
      ? clip(first.path.map((k) => shownText(String(k), MAX_NAME)).join('.'), 4 * MAX_NAME)
      : '';
    const message = typeof first.message === 'string' ? first.message : 'is invalid';
    return invalidArguments(tool, path, shownText(message, MAX_DETAIL));
  }
  const message = error instanceof Error ? error.message : String(error);
  return invalidArguments(tool, '', shownText(message, MAX_DETAIL));
}

/** Whether `value` is a plain JSON object (what a context's `arguments` must be). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
