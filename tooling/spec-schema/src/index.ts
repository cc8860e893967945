/**
 * @mrtr/spec-schema: validate any MCP 2026-07-28 JSON-RPC message against the
 * official `schema.json` (JSON Schema 2020-12, with Ajv), as tests do with
 * every message they put on the wire. The schema is a vendored copy
 * (`schema/2026-07-28/schema.json`) so a clone validates the same everywhere.
 *
 * Which definition a message is checked against: a request or notification
 * by its `method` (`tools/call` → `CallToolRequest`); an error response by its
 * code (`-32020` → `HeaderMismatchError`, `-32602` → `InvalidParamsError` for
 * the error object); a result response by the method it answers
 * (`tools/call` → `CallToolResultResponse`), or as `InputRequiredResult` /
 * `JSONRPCResultResponse` when the method is not given.
 *
 * @example
 * ```ts
 * import { assertValidMessage, validateMessage } from '@mrtr/spec-schema';
 * assertValidMessage(requestBody); // throws SpecSchemaError listing each violation
 * const check = validateMessage(responseBody, { method: 'tools/call' });
 * if (!check.ok) console.log(check.definitions, check.errors);
 * ```
 * @packageDocumentation
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import schema from '../schema/2026-07-28/schema.json' with { type: 'json' };

/** The protocol revision of the vendored schema. */
export const SCHEMA_REVISION = '2026-07-28';

/** The parts of a schema node this module reads. */
interface Definition {
  const?: unknown;
  allOf?: Definition[];
  properties?: Record<string, Definition>;
}
const defs = (schema as { $defs: Record<string, Definition> }).$defs;
const SCHEMA_ID = `https://modelcontextprotocol.io/schema/${SCHEMA_REVISION}/schema.json`;

// ajv-formats is CommonJS; its default export arrives as the module object under NodeNext.
const addFormats = ((addFormatsModule as { default?: unknown }).default ??
  addFormatsModule) as typeof import('ajv-formats').default;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ ...schema, $id: SCHEMA_ID });

/** Full JSON-RPC messages (they have `jsonrpc`) keyed by method: requests and notifications apart. */
const requests = new Map<string, string>();
const notifications = new Map<string, string>();
/** Error responses (`HeaderMismatchError`…) and bare error objects (`ParseError`…) keyed by code. */
const errorResponses = new Map<number, string>();
const errorObjects = new Map<number, string>();
for (const [name, def] of Object.entries(defs)) {
  const props = def.properties ?? {};
  const method = props.method?.const;
  if (typeof method === 'string' && props.jsonrpc) {
    (props.id ? requests : notifications).set(method, name);
  }
  const responseCode = props.error?.allOf
    ?.map((part) => part.properties?.code?.const)
    .find((code) => typeof code === 'number');
  if (typeof responseCode === 'number') errorResponses.set(responseCode, name);
  if (typeof props.code?.const === 'number' && !props.jsonrpc)
    errorObjects.set(props.code.const, name);
}

const compiled = new Map<string, ValidateFunction>();
function validatorFor(definition: string): ValidateFunction {
  let validate = compiled.get(definition);
  if (!validate) {
    if (!(definition in defs)) throw new Error(`schema.json has no definition ${definition}`);
    validate = ajv.compile({ $ref: `${SCHEMA_ID}#/$defs/${definition}` });
    compiled.set(definition, validate);
  }
  return validate;
}

/** The outcome of a validation: the definitions checked, and every violation (`path: message`). */
export interface ValidationOutcome {
  ok: boolean;
  definitions: string[];
  errors: string[];
}

/**
 * Validate `value` against one named definition of `schema.json`.
 * @throws Error when the schema has no such definition.
 */
export function validateAs(definition: string, value: unknown): ValidationOutcome {
  const validate = validatorFor(definition);
  const ok = validate(value) === true;
  const errors = ok
    ? []
    : (validate.errors ?? []).map(
        (e) =>
          `${definition}${e.instancePath || ''}: ${e.message ?? 'invalid'}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
      );
  return { ok, definitions: [definition], errors };
}

function both(a: ValidationOutcome, b: ValidationOutcome): ValidationOutcome {
  return {
    ok: a.ok && b.ok,
    definitions: [...a.definitions, ...b.definitions],
    errors: [...a.errors, ...b.errors],
  };
}

/**
 * Validate one JSON-RPC message of protocol 2026-07-28.
 * @param message the parsed JSON body (anything)
 * @param options `method`: for a result response, the method of the request it answers
 * @returns which definitions were checked and every violation; never throws
 *   (a batch array or a non-object is reported as a violation)
 */
export function validateMessage(
  message: unknown,
  options: { method?: string } = {},
): ValidationOutcome {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    return {
      ok: false,
      definitions: ['JSONRPCMessage'],
      errors: ['JSONRPCMessage: a message is one JSON object (2026-07-28 has no batches)'],
    };
  }
  const m = message as Record<string, unknown>;
  if (typeof m.method === 'string') {
    if ('id' in m) return validateAs(requests.get(m.method) ?? 'JSONRPCRequest', m);
    return validateAs(notifications.get(m.method) ?? 'JSONRPCNotification', m);
  }
  if (m.error !== undefined) {
    const code = (m.error as { code?: unknown } | null)?.code;
    const response = typeof code === 'number' ? errorResponses.get(code) : undefined;
    if (response) return validateAs(response, m);
    const envelope = validateAs('JSONRPCErrorResponse', m);
    const object = typeof code === 'number' ? errorObjects.get(code) : undefined;
    return object ? both(envelope, validateAs(object, m.error)) : envelope;
  }
  if (m.result !== undefined) {
    const resultType = (m.result as { resultType?: unknown } | null)?.resultType;
    const request = options.method ? requests.get(options.method) : undefined;
    const answer = request?.replace(/Request$/, 'ResultResponse');
    if (answer && answer in defs) {
      // The response's `result` is an anyOf of InputRequiredResult (which needs little more than a
      // string resultType) and the method's own result: check the one it claims to be as well.
      const response = validateAs(answer, m);
      const claimed =
        resultType === 'input_required'
          ? 'InputRequiredResult'
          : (request as string).replace(/Request$/, 'Result');
      return claimed in defs ? both(response, validateAs(claimed, m.result)) : response;
    }
    const envelope = validateAs('JSONRPCResultResponse', m);
    if (resultType === 'input_required')
      return both(envelope, validateAs('InputRequiredResult', m.result));
    const result = request?.replace(/Request$/, 'Result');
    return result && result in defs ? both(envelope, validateAs(result, m.result)) : envelope;
  }
  return validateAs('JSONRPCMessage', m);
}

/** Thrown by {@link assertValidMessage}; `errors` lists each violation. */
export class SpecSchemaError extends Error {
  override readonly name = 'SpecSchemaError';
  constructor(
    readonly definitions: string[],
    readonly errors: string[],
    readonly value: unknown,
  ) {
    super(
      `message violates MCP ${SCHEMA_REVISION} schema.json (${definitions.join(' + ')}):\n  ${errors.join('\n  ')}\n  message: ${JSON.stringify(value).slice(0, 2000)}`,
    );
  }
}

/**
 * Like {@link validateMessage}, but throws.
 * @throws {SpecSchemaError} listing every violation and the message itself.
 */
export function assertValidMessage(message: unknown, options: { method?: string } = {}): void {
  const outcome = validateMessage(message, options);
  if (!outcome.ok) throw new SpecSchemaError(outcome.definitions, outcome.errors, message);
}

export { validatingFetch, type WireLog, wireLog } from './fetch.js';
export { type Capabilities, callTool, PROTOCOL, rpc } from './raw-client.js';
