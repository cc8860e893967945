import type { Json } from '@mrtr/replay';
import {
  type CallToolResult,
  type InputRequiredResult,
  type RequestedSchema,
  type ToolAnnotations,
  textResult,
} from '@mrtr/wire';
import { type ArgsSchema, objectSchema, parseArgs } from './args.js';
import {
  type AnswerOf,
  type Choice,
  type FormField,
  type FormFields,
  fieldSchema,
  isConsent,
  isRequired,
  quoted,
} from './fields.js';
import { assertLevel, principalIdOf } from './flow.js';
import type { ConfirmationGate } from './gate.js';
import type { Confirmation, GateRequest, GateSpec, LevelPolicy } from './types.js';

/** Most characters of a mistyped confirmation the notice shows back (a preview, see `preview`). */
const MAX_TYPED_SHOWN = 64;
/** Characters of the expected text shown: a name to type, never long (a stored one is shown as a preview). */
const MAX_EXPECTED_SHOWN = 256;

const WITHOUT_ASKING = Symbol('withoutAsking');

/** A result `ask` answers at once, without a question: build it with {@link withoutAsking}. */
export class WithoutAsking {
  readonly [WITHOUT_ASKING] = true;
  constructor(readonly result: CallToolResult) {}
}

/**
 * End the call at once with `result`, asking nothing (nothing matched, no
 * access, the target is gone). On a retry or inside the claim, nothing is
 * performed and the ticket stays unused.
 */
export function withoutAsking(result: CallToolResult): WithoutAsking {
  return new WithoutAsking(result);
}

/** What `ask` found: the question to put, or {@link withoutAsking} a final result instead. */
export type Asking<View, F extends FormFields> =
  | {
      /** What the person reads: what will happen, to what, and that it cannot be undone. */
      message: string;
      /** What `perform` needs of the target; the question is a function of it and the message. */
      view: View;
      /** The live candidates of each `choose` field. */
      choices?: { [K in keyof F]?: readonly Choice[] };
      /** The text each `typeToConfirm` field must equal. */
      expect?: { [K in keyof F]?: string };
      /**
       * Facts to seal in the ticket of this question (small JSON, e.g. a
       * file's device and inode), handed back as `sealed` to `ask` on every
       * retry of that ticket and inside its claim: what the person was asked
       * about, which live data cannot tell. Only the server reads it.
       */
      seal?: Json;
    }
  | WithoutAsking;

/** What `ask` and `perform` receive about the call. */
export interface CallInput<Args, Tx> {
  /** The validated arguments. */
  args: Args;
  /** The authenticated principal's id. */
  principal: string;
  /**
   * `undefined` when asking; inside the replay store's claim, its
   * transaction: read with it and lock what will change (`FOR UPDATE`).
   */
  tx: Tx | undefined;
  /**
   * On a retry and inside the claim: the `seal` that `ask` returned when the
   * ticket this request presents was minted (`undefined` at round 1, or when
   * nothing was sealed). Compare it with the live target to refuse one that
   * was replaced instead of asking about the replacement.
   */
  sealed: Json | undefined;
}

/** What a declaration's `check` receives: the arguments, the live view and the typed answer. */
export interface CheckCall<Args, View, F extends FormFields> {
  args: Args;
  principal: string;
  view: View;
  /** The person's answer, one value per form field, as `perform` would receive it. */
  answer: AnswerOf<F>;
}

/** What `perform` receives: the call, the live view, the typed answer, and the claim's transaction. */
export interface PerformCall<Args, View, F extends FormFields, Tx> {
  args: Args;
  principal: string;
  /** The target as read inside the claim, unchanged from what the person was asked about. */
  view: View;
  /** The person's answer, one value per form field (consent fields are `true` or the typed text). */
  answer: AnswerOf<F>;
  /**
   * The accepted response's `content` as received (`{}` for an approval on
   * the page): what a receipt's content digest binds. An executor that
   * verifies receipts takes the person's choices from it.
   */
  content: Readonly<Record<string, unknown>>;
  /** The transaction the nonce is claimed in: mutate on it, so both commit or neither does. */
  tx: Tx;
  /** How the person confirmed (form, or approval page with `approvalId` and a passkey's `credentialId`). */
  confirmation: Confirmation;
  /** The ticket nonce just claimed: key an idempotent mutation on it. */
  nonce: string;
  /** The signed approval receipt, when the gate has a `receipts` issuer: hand it to the executor. */
  receipt?: string;
}

/**
 * One gated tool, declared once: arguments, form, what to ask, what to do.
 * Declare `ask` before `level` and `perform`: TypeScript infers the view
 * they receive from what `ask` returns, in the order written.
 */
export interface GatedToolDeclaration<Args, View, F extends FormFields, Tx> {
  name: string;
  title?: string;
  description: string;
  /** The arguments, declared once: validation and `inputSchema` both come from it. */
  args: ArgsSchema<Args>;
  /** `tools/list` annotations (default `destructiveHint: true`, `idempotentHint: false`). */
  annotations?: ToolAnnotations;
  /** The form, by field kind (`choose`, `confirm`, `typeToConfirm`, `text`, `flag`); at least one consent field. */
  form: F;
  /** The `inputRequests` key of the question (default `confirm`). */
  key?: string;
  /** How the person must confirm (default `form`), or a function of the live view and arguments. */
  level?: LevelPolicy | ((view: NoInfer<View>, args: NoInfer<Args>) => LevelPolicy);
  /** Read the target (re-authorize too) and say what to ask; called every round and again inside the claim. */
  ask(call: CallInput<Args, Tx>): Promise<Asking<View, F>>;
  /**
   * Rules of a form answer that its schema cannot state, e.g. a choice the
   * live target does not allow: return a notice to ask again with the same
   * ticket, or `undefined` to go on. Called for an accepted form answer
   * after its typed fields matched, before the claim, so a refused answer
   * spends nothing (an approval on the page is not checked: Approve is its
   * answer). `view` is the target as read this round. The notice is shown
   * above the question and recorded, cut to 1,000 UTF-16 code units (`…` at
   * the cut): quote what the person chose as a short preview, or not at all.
   */
  check?(call: CheckCall<Args, NoInfer<View>, F>): string | undefined;
  /** Mutate, on `tx`. Runs at most once per confirmation. */
  perform(call: PerformCall<Args, NoInfer<View>, F, Tx>): Promise<CallToolResult>;
  /** Result when the person declines (default: a plain refusal that says nothing changed). */
  declined?(args: Args): CallToolResult;
  /** Result when the person dismisses the question (default: says nothing changed). */
  cancelled?(args: Args): CallToolResult;
}

/**
 * A gated tool as an MCP server lists and calls it: the shape of
 * `@mrtr/server`'s `ToolDefinition` (and what the SDK bridge registers).
 */
export interface GatedTool<Args> {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  annotations: ToolAnnotations;
  /**
   * Validate raw arguments: undeclared ones and invalid values are refused.
   * @throws {McpError} `-32602` naming the argument (never echoing its value).
   */
  parse(raw: unknown): Args;
  /** One round of the confirmation for `args` (already parsed). */
  handler(args: Args, request: GateRequest): Promise<CallToolResult | InputRequiredResult>;
}

/** The low-level view a declaration's question is built from. */
interface Shown<View> {
  message: string;
  view: View;
  choices: Record<string, readonly Choice[]>;
  expect: Record<string, string>;
}

/**
 * Build the {@link GatedTool} of `declaration` on `gate`.
 * @throws {TypeError} at once when the form has no consent field (`confirm` or `typeToConfirm`)
 *   or a field named `__proto__`,
 *   the argument schema gives no object JSON Schema, or a fixed `level` is
 *   no level, or is `url`, `presence` or `form-or-url` on a gate without `approvals`.
 */
export function gatedTool<Args, View, F extends FormFields, Tx>(
  gate: ConfirmationGate<Tx>,
  declaration: GatedToolDeclaration<Args, View, F, Tx>,
): GatedTool<Args> {
  const form = Object.entries(declaration.form ?? {}); // plain JavaScript may omit it: same rule, same message
  // A form parsed from JSON may hold one: assigned into the schema it would set its prototype instead.
  if (form.some(([name]) => name === '__proto__'))
    throw new TypeError(`gated tool ${declaration.name}: a form field cannot be named __proto__`);
  if (!form.some(([, f]) => isConsent(f)))
    throw new TypeError(
      `gated tool ${declaration.name} needs a consent field in its form (confirm or typeToConfirm): in form mode accept only means the form was submitted`,
    );
  const inputSchema = objectSchema(declaration);
  const declared = new Set(Object.keys((inputSchema.properties as object | undefined) ?? {}));
  const chooser = form.find(([, f]) => f.kind === 'choose')?.[0];
  const consentFields = form.filter(([, f]) => isConsent(f)).map(([name]) => name);
  const level = declaration.level;
  assertLevel(level, gate.approvals !== undefined, `gated tool ${declaration.name}`);

  return {
    name: declaration.name,
    ...(declaration.title !== undefined ? { title: declaration.title } : {}),
    description: declaration.description,
    inputSchema,
    annotations: { destructiveHint: true, idempotentHint: false, ...declaration.annotations },
    parse(raw) {
      return parseArgs(declaration, declared, raw);
    },
    handler(args, request) {
      const principal = principalIdOf(request);
      const spec: GateSpec<Shown<View>, Tx> = {
        key: declaration.key ?? 'confirm',
        ...(level === undefined
          ? {}
          : { level: typeof level === 'function' ? ({ view }) => level(view.view, args) : level }),
        ...(chooser !== undefined ? { candidateField: chooser } : {}),
        consentFields,
        async prepare(tx, sealed) {
          const asking = await declaration.ask({ args, principal, tx, sealed });
          if (asking instanceof WithoutAsking) return { result: asking.result };
          const shown: Shown<View> = {
            message: asking.message,
            view: asking.view,
            choices: (asking.choices ?? {}) as Record<string, readonly Choice[]>,
            expect: (asking.expect ?? {}) as Record<string, string>,
          };
          const candidates =
            chooser === undefined ? undefined : (shown.choices[chooser] ?? []).map((c) => c.value);
          // The last candidate went while the person answered (or none matched): nothing to ask.
          // Two of one value: an answer could not say which was meant (nor could a form offer both).
          const problem = candidates === undefined ? undefined : choiceProblem(candidates);
          if (problem !== undefined)
            return { result: unchoosable(declaration.form?.[chooser as string], problem) };
          return {
            view: shown,
            ...(candidates === undefined ? {} : { candidates }),
            ...(asking.seal === undefined ? {} : { seal: asking.seal }),
          };
        },
        question({ view }, notice) {
          return {
            message: notice ? `${notice}\n\n${view.message}` : view.message,
            requestedSchema: requestedSchemaOf(declaration.form, view.choices),
          };
        },
        consents: (content) =>
          form.every(([name, f]) => f.kind !== 'confirm' || content[name] === true),
        check(content, { view }) {
          for (const [name, f] of form) {
            if (f.kind !== 'typed') continue;
            const expected = view.expect[name];
            if (expected === undefined || content[name] !== expected)
              // What was typed is shown as a preview: one line, hidden characters shown, at most 64.
              return `Confirmation did not match: you typed ${quoted(String(content[name]), MAX_TYPED_SHOWN)}, expected ${quoted(expected ?? '', MAX_EXPECTED_SHOWN)}.${firstDifference(String(content[name]), expected ?? '')} Type it exactly to confirm.`;
          }
          return declaration.check?.({
            args,
            principal,
            view: view.view,
            answer: answerOf(declaration.form, content, view.expect) as AnswerOf<F>,
          });
        },
        perform: ({ content, view, tx, confirmation, claims, receipt }) =>
          declaration.perform({
            args,
            principal,
            view: view.view,
            answer: answerOf(declaration.form, content, view.expect) as AnswerOf<F>,
            content,
            tx,
            confirmation,
            nonce: claims.nonce,
            ...(receipt !== undefined ? { receipt } : {}),
          }),
        ...(declaration.declined
          ? { declined: () => (declaration.declined as (a: Args) => CallToolResult)(args) }
          : {}),
        ...(declaration.cancelled
          ? { cancelled: () => (declaration.cancelled as (a: Args) => CallToolResult)(args) }
          : {}),
      };
      return gate.run({ ...request, arguments: args as Record<string, unknown> }, spec);
    },
  };
}

/**
 * Where a typed confirmation first differs from the expected text, by code
 * point (` At character 2 you typed U+006F, expected U+043E.`): two strings
 * that draw alike (a Cyrillic `о` for a Latin `o`, a no-break space) are
 * told apart by the code points, as their previews cannot. Empty when one
 * is a prefix of the other (the lengths differ, which the previews show).
 */
function firstDifference(typed: string, expected: string): string {
  const a = Array.from(typed);
  const b = Array.from(expected);
  for (let i = 0; i < Math.min(a.length, b.length, MAX_EXPECTED_SHOWN); i++)
    if (a[i] !== b[i])
      return ` At character ${i + 1} you typed ${codePoint(a[i] as string)}, expected ${codePoint(b[i] as string)}.`;
  return '';
}

const codePoint = (c: string) =>
  `U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * The result of a call whose `choose` field has no live candidate, or two of
 * one value: an `isError` result, as `withoutAsking` would give (a select of
 * no options, or of one option twice, is no valid form).
 */
function unchoosable(f: FormField | undefined, problem: ChoiceProblem): CallToolResult {
  const title = quoted(f?.title ?? '', MAX_EXPECTED_SHOWN);
  return textResult(
    problem === 'repeated'
      ? `Nothing was done: two of the choices for ${title} have the same value, so an answer could not say which was meant. Ask the server's operator.`
      : problem === 'not_text'
        ? `Nothing was done: a choice for ${title} has a value that is not well-formed text (a lone surrogate), which an answer cannot carry back exactly. Ask the server's operator.`
        : `Nothing was done: there is nothing to choose from for ${title}.`,
    { isError: true },
  );
}

type ChoiceProblem = 'none' | 'repeated' | 'not_text';

/** What keeps `values` from being offered as a choice, if anything. */
function choiceProblem(values: readonly unknown[]): ChoiceProblem | undefined {
  if (values.length === 0) return 'none';
  if (values.some((v) => typeof v !== 'string' || !v.isWellFormed())) return 'not_text';
  return new Set(values).size !== values.length ? 'repeated' : undefined;
}

/** The requested schema of `form` with the live choices. */
function requestedSchemaOf(
  form: FormFields,
  choices: Record<string, readonly Choice[]>,
): RequestedSchema {
  const properties: RequestedSchema['properties'] = {};
  const required: string[] = [];
  for (const [name, f] of Object.entries(form)) {
    properties[name] = fieldSchema(f, choices[name]);
    if (isRequired(f)) required.push(name);
  }
  return { type: 'object', properties, required };
}

/**
 * The typed answer: each form field's value, flags with their defaults,
 * consent fields as given (on the approval page, where Approve is the
 * consent, `true` and the expected text).
 */
function answerOf(
  form: FormFields,
  content: Record<string, unknown>,
  expect: Record<string, string>,
): Record<string, unknown> {
  const answer: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(form)) {
    const value = content[name];
    if (f.kind === 'flag') answer[name] = typeof value === 'boolean' ? value : f.default;
    else if (f.kind === 'confirm') answer[name] = true;
    else if (f.kind === 'typed') answer[name] = expect[name];
    else answer[name] = value;
  }
  return answer;
}
