/**
 * In-place checks of the request parts a server reads on every call: the
 * same rules as {@link RequestMetaSchema} and `CallToolRequestParamsSchema`
 * (without `_meta`), answered without building a copy. A zod parse returns a
 * new object for every object it validates; on the request path those copies
 * were most of a request's garbage. `test/checks.test.ts` compares each check
 * with its schema on generated input.
 */
import { LoggingLevelSchema, type RequestMeta } from './meta.js';

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const optional = (v: unknown, check: (v: unknown) => boolean) => v === undefined || check(v);
const stringArray = (v: unknown) => Array.isArray(v) && v.every(isString);

/**
 * `JSONObject` values only: a `z.record(z.string(), JSONObjectSchema)`. Like
 * zod's record, a member named `__proto__` is not looked at.
 */
function objectOfObjects(v: unknown): boolean {
  if (!isObject(v)) return false;
  for (const key in v)
    if (key !== '__proto__' && Object.hasOwn(v, key) && !isObject(v[key])) return false;
  return true;
}

function isIcon(v: unknown): boolean {
  return (
    isObject(v) &&
    isString(v.src) &&
    optional(v.mimeType, isString) &&
    optional(v.sizes, stringArray) &&
    optional(v.theme, (t) => t === 'light' || t === 'dark')
  );
}

/** `Implementation`: `name` and `version` strings, optional `title`, `icons`, `websiteUrl`. */
export function isImplementation(v: unknown): boolean {
  return (
    isObject(v) &&
    isString(v.name) &&
    isString(v.version) &&
    optional(v.title, isString) &&
    optional(v.icons, (icons) => Array.isArray(icons) && icons.every(isIcon)) &&
    optional(v.websiteUrl, isString)
  );
}

/** `ClientCapabilities` as `ClientCapabilitiesSchema` reads it (unknown capabilities kept). */
export function isClientCapabilities(v: unknown): boolean {
  if (!isObject(v)) return false;
  const { elicitation, sampling } = v;
  return (
    optional(
      elicitation,
      (e) => isObject(e) && optional(e.form, isObject) && optional(e.url, isObject),
    ) &&
    optional(
      sampling,
      (s) => isObject(s) && optional(s.context, isObject) && optional(s.tools, isObject),
    ) &&
    optional(v.roots, isObject) &&
    optional(v.experimental, objectOfObjects) &&
    optional(v.extensions, objectOfObjects)
  );
}

const LOGGING_LEVELS = new Set<string>(LoggingLevelSchema.options);

/**
 * Whether `v` is a valid request `_meta` (`RequestMetaObject`, the rules of
 * `RequestMetaSchema`: every key optional, unknown keys kept). Reads `v` in
 * place and never copies it.
 * @returns `true` when `RequestMetaSchema.safeParse(v)` would succeed.
 */
export function isRequestMeta(v: unknown): v is RequestMeta {
  if (!isObject(v)) return false;
  const token = v.progressToken;
  return (
    optional(token, (t) => isString(t) || (typeof t === 'number' && Number.isSafeInteger(t))) &&
    optional(v['io.modelcontextprotocol/protocolVersion'], isString) &&
    optional(v['io.modelcontextprotocol/clientInfo'], isImplementation) &&
    optional(v['io.modelcontextprotocol/clientCapabilities'], isClientCapabilities) &&
    optional(v['io.modelcontextprotocol/logLevel'], (l) => isString(l) && LOGGING_LEVELS.has(l)) &&
    optional(v.traceparent, isString) &&
    optional(v.tracestate, isString) &&
    optional(v.baggage, isString)
  );
}

/**
 * Whether `v` is valid `CallToolRequestParams` apart from `_meta` (checked on
 * its own by {@link isRequestMeta}): a string `name`, `arguments` a JSON
 * object, `inputResponses` an object of JSON objects, `requestState` a
 * string; unknown members kept. Reads `v` in place.
 * @returns `true` when `CallToolRequestParamsSchema.omit({ _meta: true }).safeParse(v)` would succeed.
 */
export function isCallToolParams(v: unknown): v is Obj & {
  name: string;
  arguments?: Obj;
  inputResponses?: Record<string, Obj>;
  requestState?: string;
} {
  return (
    isObject(v) &&
    isString(v.name) &&
    optional(v.arguments, isObject) &&
    optional(v.inputResponses, objectOfObjects) &&
    optional(v.requestState, isString)
  );
}

/**
 * The first retry field of `tools/call` params (MCP 2026-07-28
 * `CallToolRequest`, `basic/patterns/mrtr`) that is not of its type, or
 * `undefined`: `inputResponses` must be a JSON object of JSON objects,
 * `requestState` a string. The same rule as {@link isCallToolParams}, told
 * per field, so a `-32602` can name it.
 * @param params the params object as received.
 * @returns `param`, the member's name (`inputResponses.<key>` for a key, as
 *   the client wrote it), and `problem`, the rule it breaks.
 */
export function retryFieldsProblem(
  params: Obj,
): { param: string; problem: 'must be a JSON object' | 'must be a string' } | undefined {
  const responses = params.inputResponses;
  if (responses !== undefined) {
    if (!isObject(responses)) return { param: 'inputResponses', problem: 'must be a JSON object' };
    // `__proto__` is left to the schema, as in {@link isCallToolParams}.
    for (const key of Object.keys(responses))
      if (key !== '__proto__' && !isObject(responses[key]))
        return { param: `inputResponses.${key}`, problem: 'must be a JSON object' };
  }
  if (params.requestState !== undefined && !isString(params.requestState))
    return { param: 'requestState', problem: 'must be a string' };
  return undefined;
}

const nonNegativeInteger = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
const finite = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const STRING_FORMATS = new Set(['email', 'uri', 'date', 'date-time']);

/** A record's own keys, or `undefined` when one is `__proto__` (left to the schema). */
function recordValues(v: Obj): unknown[] | undefined {
  const values: unknown[] = [];
  for (const key of Object.keys(v)) {
    if (key === '__proto__') return undefined;
    values.push(v[key]);
  }
  return values;
}

/**
 * A form field of the common kinds (an untitled single-select enum, text,
 * a number or integer, a boolean), each as `PrimitiveSchemaDefinitionSchema`
 * accepts it. Titled and multi-select enums answer `false`: the schema decides.
 */
function isCommonField(f: unknown): boolean {
  if (!isObject(f) || !optional(f.title, isString) || !optional(f.description, isString))
    return false;
  switch (f.type) {
    case 'string':
      if (f.enum !== undefined)
        return (
          stringArray(f.enum) && optional(f.enumNames, stringArray) && optional(f.default, isString)
        );
      return (
        optional(f.minLength, nonNegativeInteger) &&
        optional(f.maxLength, nonNegativeInteger) &&
        optional(f.format, (x) => isString(x) && STRING_FORMATS.has(x)) &&
        optional(f.default, isString)
      );
    case 'number':
    case 'integer':
      return (
        optional(f.minimum, finite) && optional(f.maximum, finite) && optional(f.default, finite)
      );
    case 'boolean':
      return optional(f.default, (x) => typeof x === 'boolean');
    default:
      return false;
  }
}

function isCommonFormElicitation(r: unknown): boolean {
  if (!isObject(r) || r.method !== 'elicitation/create') return false;
  const p = r.params;
  if (!isObject(p) || !(p.mode === undefined || p.mode === 'form')) return false;
  if (!isString(p.message) || p._meta !== undefined) return false;
  const s = p.requestedSchema;
  if (!isObject(s) || s.type !== 'object' || !optional(s.$schema, isString)) return false;
  if (!optional(s.required, stringArray) || !isObject(s.properties)) return false;
  const fields = recordValues(s.properties);
  return fields?.every(isCommonField) === true;
}

/**
 * A sufficient, in-place check of an outgoing `InputRequiredResult` of the
 * common kind: `resultType: "input_required"`, no `_meta`, an optional string
 * `requestState`, and `inputRequests` (if any) that are all form-mode
 * `elicitation/create` requests whose fields are untitled enums, text,
 * numbers or booleans; at least one of `inputRequests` and `requestState`.
 * It reads `v` in place and never copies it.
 *
 * One-sided: `true` means `InputRequiredResultSchema.safeParse(v)` succeeds
 * (`test/checks.test.ts` checks this on generated input); `false` says
 * nothing, and the caller must ask the schema.
 */
export function isCommonInputRequiredResult(v: unknown): boolean {
  if (!isObject(v) || v.resultType !== 'input_required' || v._meta !== undefined) return false;
  if (!optional(v.requestState, isString)) return false;
  if (v.inputRequests === undefined) return v.requestState !== undefined;
  if (!isObject(v.inputRequests)) return false;
  const requests = recordValues(v.inputRequests);
  return requests?.every(isCommonFormElicitation) === true;
}
