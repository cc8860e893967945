import { CanonicalizeError, canonicalize, digestCanonical } from '@mrtr/digest';
import type { ReplayStore } from '@mrtr/replay';
import type { TicketSealer } from '@mrtr/ticket';
import {
  ErrorCode,
  McpError,
  type RequestedSchema,
  supportsFormElicitation,
  supportsUrlElicitation,
} from '@mrtr/wire';
import type { ApprovalChannel, ConfirmationLevel } from './approval.js';
import type { Round } from './round.js';
import type {
  AskContext,
  GateQuestion,
  GateRequest,
  GateSpec,
  LevelPolicy,
  ReceiptIssuer,
} from './types.js';

/** What a gate lends every round. */
export interface GateParts<Tx> {
  sealer: TicketSealer;
  store: ReplayStore<Tx>;
  approvals: ApprovalChannel | undefined;
  receipts: ReceiptIssuer | undefined;
}

/** One run of the gate: the request, the operation it names, and the round's records. */
export interface Flow<View, Tx> {
  readonly parts: GateParts<Tx>;
  readonly request: GateRequest;
  readonly spec: GateSpec<View, Tx>;
  readonly round: Round;
  readonly principal: string;
  /** `method:name`, the ticket's `op`. */
  readonly operation: string;
  readonly argsDigest: string;
  readonly phase: string;
}

/** The live view of the target, with the question it gives (without a notice) in the mode chosen. */
export class Asked<View> {
  #digest: string | undefined;

  constructor(
    readonly context: AskContext<View>,
    readonly mode: ConfirmationLevel,
    readonly question: GateQuestion,
    /** The form the person fills in: the whole schema in form mode; without consent fields on the page. */
    readonly schema: RequestedSchema,
    /** RFC 8785 text of mode, message and schema: what {@link digest} hashes. */
    readonly canonical: string,
  ) {}

  /**
   * `digestCanonical` of {@link canonical}, hashed when first read: a check
   * that compares two live questions compares their canonical text instead
   * (equal text, equal digest), and needs no hash.
   */
  get digest(): string {
    if (this.#digest === undefined) this.#digest = digestCanonical(this.canonical);
    return this.#digest;
  }
}

/**
 * The `_meta`-declared capability each mode needs (`data.requiredCapabilities`
 * of `-32021`, which carries a copy). Frozen, to the last level.
 */
export const REQUIRED_CAPABILITIES = Object.freeze({
  form: Object.freeze({ elicitation: Object.freeze({ form: Object.freeze({}) }) }),
  url: Object.freeze({ elicitation: Object.freeze({ url: Object.freeze({}) }) }),
});

/** The capability a gated request needs in form mode. */
export const FORM_ELICITATION_REQUIRED = REQUIRED_CAPABILITIES.form;

const LEVELS: ReadonlySet<unknown> = new Set(['form', 'url', 'presence', 'form-or-url']);

/**
 * Refuse, when a tool is declared, a fixed `level` the gate can never serve:
 * a value that is no level, or `url`, `presence` or `form-or-url` on a gate
 * without `approvals`, which would otherwise fail only at the first call a
 * URL-capable client makes. A level chosen by a function is judged per call.
 * @throws {TypeError} naming `what` and the level.
 */
export function assertLevel(level: unknown, hasApprovals: boolean, what: string): void {
  if (level === undefined || typeof level === 'function') return;
  if (!LEVELS.has(level))
    throw new TypeError(
      `${what} has level ${JSON.stringify(level)}: a level is form, url, presence or form-or-url (or a function returning one)`,
    );
  if (level !== 'form' && !hasApprovals)
    throw new TypeError(
      `${what} has level ${level}, which puts the question on the approval page, but the gate has no approvals channel: pass approvals (createApprovalChannel of @mrtr/approval-page) to ConfirmationGate`,
    );
}

/** The level policy of `spec` for this live view. */
export function policyOf<View, Tx>(
  spec: GateSpec<View, Tx>,
  context?: AskContext<View>,
): LevelPolicy {
  const level = spec.level ?? 'form';
  if (typeof level !== 'function') return level;
  return context === undefined ? 'form-or-url' : level(context);
}

/**
 * The mode this request can be asked in under `policy`, from this request's
 * capabilities only (an earlier declaration never counts).
 * @throws {McpError} `-32021` with `data.requiredCapabilities` when the client declared no usable mode.
 */
export function modeFor(flow: { request: GateRequest }, policy: LevelPolicy): ConfirmationLevel {
  const caps = flow.request.capabilities;
  const form = supportsFormElicitation(caps);
  const url = supportsUrlElicitation(caps);
  if (policy === 'form' && form) return 'form';
  if ((policy === 'url' || policy === 'presence') && url) return policy;
  if (policy === 'form-or-url' && (form || url)) return form ? 'form' : 'url';
  const needs = policy === 'url' || policy === 'presence' ? 'url' : 'form';
  const how =
    needs === 'url'
      ? 'on the server’s approval page through URL elicitation; declare elicitation.url'
      : 'through form elicitation; declare elicitation.form';
  throw new McpError(
    ErrorCode.MissingRequiredClientCapability,
    `${flow.request.name} needs a person to confirm it ${how} in _meta clientCapabilities`,
    // A copy: a caller that adds to the error's data changes neither the constant nor later errors.
    { requiredCapabilities: structuredClone(REQUIRED_CAPABILITIES[needs]) },
  );
}

/** Whether a ticket asked in `mode` may still be answered under `policy`. */
export function allows(policy: LevelPolicy, mode: ConfirmationLevel): boolean {
  return policy === mode || (policy === 'form-or-url' && (mode === 'form' || mode === 'url'));
}

/**
 * The live question of `context` in `mode`, and its digest: what the ticket
 * seals so that a retry can tell whether the target still asks the same.
 * Text is made well-formed (a lone surrogate becomes U+FFFD) before it is
 * sent or digested.
 */
export function asked<View, Tx>(
  spec: GateSpec<View, Tx>,
  context: AskContext<View>,
  mode: ConfirmationLevel,
): Asked<View> {
  const q = spec.question(context);
  let question = { ...q, message: q.message.toWellFormed() };
  let schema = mode === 'form' ? question.requestedSchema : pageSchema(spec, question);
  let canonical: string;
  try {
    canonical = canonicalize({ mode, message: question.message, requestedSchema: schema });
  } catch (error) {
    if (!(error instanceof CanonicalizeError) || error.code !== 'lone_surrogate') throw error;
    // Text cut in the middle of a character (a title sliced to a length): made well-formed, as
    // the message is. Only on this path: the walk costs nothing to a question that needs none.
    question = { ...question, requestedSchema: wellFormedLabels(question.requestedSchema) };
    schema = mode === 'form' ? question.requestedSchema : pageSchema(spec, question);
    try {
      canonical = canonicalize({ mode, message: question.message, requestedSchema: schema });
    } catch (again) {
      if (!(again instanceof CanonicalizeError)) throw again;
      throw new TypeError(
        `the question of ${spec.key} offers what JSON cannot carry exactly (${again.code.replace(/_/g, ' ')} at ${again.path || '/'}): a value a person may choose must be well-formed text (String.prototype.toWellFormed)`,
      );
    }
  }
  return new Asked(context, mode, question, schema, canonical);
}

/** Keys of a form's schema whose strings are only shown, never sent back as an answer. */
const LABELS = new Set(['title', 'description', 'enumNames']);

/**
 * `schema` with every label it shows (titles, descriptions, `enumNames`)
 * made well-formed, a lone surrogate becoming U+FFFD; the values a person
 * may choose (`enum`, `const`, `default`) are left as they are.
 */
function wellFormedLabels(schema: RequestedSchema): RequestedSchema {
  const walk = (value: unknown, label: boolean): unknown => {
    if (typeof value === 'string') return label ? value.toWellFormed() : value;
    if (Array.isArray(value)) return value.map((item) => walk(item, label));
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, member]) => [key, walk(member, LABELS.has(key))]),
    );
  };
  return walk(schema, false) as RequestedSchema;
}

/** The question with a notice before it, for asking again. */
export function withNotice<View, Tx>(
  spec: GateSpec<View, Tx>,
  context: AskContext<View>,
  notice: string | undefined,
): GateQuestion {
  const q = spec.question(context, notice);
  return { ...q, message: q.message.toWellFormed() };
}

/** The form of the approval page: the question's fields without those that only say yes. */
function pageSchema<View, Tx>(spec: GateSpec<View, Tx>, q: GateQuestion): RequestedSchema {
  const consent = new Set(spec.consentFields ?? []);
  const properties = Object.fromEntries(
    Object.entries(q.requestedSchema.properties).filter(([name]) => !consent.has(name)),
  );
  const required = (q.requestedSchema.required ?? []).filter((name) => !consent.has(name));
  return required.length > 0
    ? { type: 'object', properties, required }
    : { type: 'object', properties };
}

/**
 * The principal's id as the gate binds it: the text given, or a safe integer
 * written in decimal (an `authenticate` that resolves a serial key, `{ id: 42 }`,
 * binds `"42"`); anything else is `''`, bound to nothing and refused when asked
 * (`principal_unrecordable`).
 */
export function principalIdOf(request: Pick<GateRequest, 'principal'>): string {
  const p = request.principal as unknown;
  const id = typeof p === 'object' && p !== null ? (p as { id?: unknown }).id : p;
  if (typeof id === 'string') return id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : '';
}
