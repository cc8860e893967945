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
