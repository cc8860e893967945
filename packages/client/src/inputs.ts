import { type FormValue, validateFormContent } from '@mrtr/wire';
import type {
  Answerer,
  AskingRequest,
  FormAnswer,
  FormQuestion,
  ServerIdentity,
  UrlAnswer,
  UrlQuestion,
} from './answerer.js';
import { AbortedError, InvalidAnswerError, ProtocolError, quoted } from './errors.js';
import type { ClientEvent, QuestionContext } from './events.js';
import { checkRenderable } from './form.js';
import { inspectUrl } from './url.js';

/** An `ElicitResult` as sent in `inputResponses`. */
export type ElicitResponse =
  | { action: 'accept'; content?: Record<string, FormValue> }
  | { action: 'decline' | 'cancel' };

/** What answering one `InputRequiredResult` needs. */
export interface RoundContext {
  answerer: Answerer | undefined;
  server: ServerIdentity;
  serverUrl: URL;
  request: AskingRequest;
  round: number;
  answerTimeoutMs: number;
  maxInvalidAnswers: number;
  signal: AbortSignal | undefined;
  emit(event: ClientEvent): void;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const ACTIONS = ['accept', 'decline', 'cancel'];

/** The key, call and round a question event is about. */
const about = (key: string, ctx: RoundContext): QuestionContext => ({
  key,
  request: ctx.request,
  round: ctx.round,
});

/** One input request, checked before anyone is asked anything. */
type Plan =
  | { key: string; kind: 'decline'; mode: string; reasons: string[]; message?: string }
  | { key: string; kind: 'form'; question: Omit<FormQuestion, 'signal'> }
  | { key: string; kind: 'url'; question: Omit<UrlQuestion, 'signal'> };

function plan(key: string, request: unknown, ctx: RoundContext): Plan {
  if (!isObject(request) || typeof request.method !== 'string') {
    throw new ProtocolError(`inputRequests[${quoted(key)}] is not a request object`);
  }
  if (request.method !== 'elicitation/create') {
    // This client never declares sampling or roots, so a server must not ask for them.
    throw new ProtocolError(
      `inputRequests[${quoted(key)}] is ${quoted(request.method)}, which this client did not declare`,
    );
  }
  const params = request.params;
  if (!isObject(params)) return { key, kind: 'decline', mode: 'unknown', reasons: ['no params'] };
  const mode =
    params.mode === undefined
      ? 'form'
      : typeof params.mode === 'string'
        ? params.mode
        : quoted(params.mode);
  const message = typeof params.message === 'string' ? params.message : undefined;
  // What the server asked travels with the decline, so an audit record can say what was refused.
  const decline = (reason: string | string[]): Plan => ({
    key,
    kind: 'decline',
    mode,
    reasons: Array.isArray(reason) ? reason : [reason],
    ...(message !== undefined ? { message } : {}),
  });
  if (message === undefined) return decline('the request has no message to show');
  const base = { key, server: ctx.server, request: ctx.request, round: ctx.round, message };
  if (mode === 'form') {
    if (!ctx.answerer?.form) return decline('this client did not declare form elicitation');
    const checked = checkRenderable(params.requestedSchema);
    if (!checked.ok) return decline(checked.reasons);
    return {
      key,
      kind: 'form',
      question: { ...base, mode: 'form', requestedSchema: checked.schema },
    };
  }
  if (mode === 'url') {
    if (!ctx.answerer?.url) return decline('this client did not declare URL elicitation');
    const inspected = inspectUrl(params.url, ctx.serverUrl);
    if (!inspected.ok) return decline(inspected.reason);
    return { key, kind: 'url', question: { ...base, mode: 'url', ...inspected.facts } };
  }
  return decline(`unknown elicitation mode "${mode}"`);
}

const TIMED_OUT = Symbol('timed out');

/**
 * Run `ask` until it settles, the timeout fires (→ {@link TIMED_OUT}; none
 * when `ms` is `undefined`) or the call is aborted (→ throws).
 */
async function withDeadline<T>(
  ask: (signal: AbortSignal) => Promise<T>,
  ms: number | undefined,
  outer: AbortSignal | undefined,
): Promise<T | typeof TIMED_OUT> {
  if (outer?.aborted) throw new AbortedError({ cause: outer.reason });
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    if (ms === undefined) return;
    timer = setTimeout(() => {
      controller.abort(new Error('the question timed out'));
      resolve(TIMED_OUT);
    }, ms);
  });
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      controller.abort(outer?.reason);
      reject(new AbortedError({ cause: outer?.reason }));
    };
    outer?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([ask(controller.signal), deadline, aborted]);
  } finally {
    clearTimeout(timer);
    if (onAbort) outer?.removeEventListener('abort', onAbort);
  }
}

async function answerForm(
  key: string,
  question: Omit<FormQuestion, 'signal'>,
  form: NonNullable<Answerer['form']>,
  ctx: RoundContext,
): Promise<ElicitResponse> {
  let retry: FormQuestion['retry'];
  for (let attempt = 1; ; attempt++) {
    const answer = await withDeadline<FormAnswer>(
      (signal) => form({ ...question, signal, ...(retry ? { retry } : {}) }),
      ctx.answerTimeoutMs,
      ctx.signal,
    );
    if (answer === TIMED_OUT) {
      ctx.emit({ type: 'timed-out', ...about(key, ctx), afterMs: ctx.answerTimeoutMs });
      return { action: 'cancel' };
    }
    if (!isObject(answer) || !ACTIONS.includes(answer.action as string)) {
      throw new InvalidAnswerError(key, [
        { field: '', reason: 'is not an ElicitResult action (accept, decline or cancel)' },
      ]);
    }
    // decline and cancel carry no content, whatever the answerer attached.
    if (answer.action !== 'accept') return { action: answer.action };
    const checked = validateFormContent(question.requestedSchema, answer.content);
    if (checked.ok) return { action: answer.action, content: checked.value };
    ctx.emit({ type: 'invalid-answer', ...about(key, ctx), issues: checked.issues });
    if (attempt >= ctx.maxInvalidAnswers) throw new InvalidAnswerError(key, checked.issues);
    retry = {
      issues: checked.issues,
      content: isObject(answer.content) ? { ...answer.content } : {},
    };
  }
}

async function answerUrl(
  key: string,
  question: Omit<UrlQuestion, 'signal'>,
  url: NonNullable<Answerer['url']>,
  ctx: RoundContext,
): Promise<ElicitResponse> {
  const answer = await withDeadline<UrlAnswer>(
    (signal) => url.ask({ ...question, signal }),
    ctx.answerTimeoutMs,
    ctx.signal,
  );
  if (answer === TIMED_OUT) {
    ctx.emit({ type: 'timed-out', ...about(key, ctx), afterMs: ctx.answerTimeoutMs });
    return { action: 'cancel' };
  }
  if (!isObject(answer) || !ACTIONS.includes(answer.action as string)) {
    throw new InvalidAnswerError(key, [
      { field: '', reason: 'is not an ElicitResult action (accept, decline or cancel)' },
    ]);
  }
  if (answer.action !== 'accept') return { action: answer.action };
  let opened: true | typeof TIMED_OUT;
  try {
    // Opened only now: the person saw the full URL and host and consented. An `open` that waits
    // for the person to finish on the page takes their time (sign-in, a first passkey), and stops
    // with the call.
    opened = await withDeadline(
      async (signal) => {
        await url.open(question.url, signal);
        return true as const;
      },
      undefined,
      ctx.signal,
    );
  } catch (error) {
    if (error instanceof AbortedError) throw error;
    ctx.emit({
      type: 'open-failed',
      ...about(key, ctx),
      reason: error instanceof Error ? error.message : String(error),
    });
    return { action: 'cancel' };
  }
  if (opened === TIMED_OUT) {
    ctx.emit({ type: 'timed-out', ...about(key, ctx), afterMs: ctx.answerTimeoutMs });
    return { action: 'cancel' };
  }
  return { action: answer.action };
}

/**
 * Most questions of one round the client puts to a person. A round asking
 * more is declined whole, without asking anyone (an `auto-declined` event per
 * question): nobody reviews 5,000 forms, and answering them one by one would
 * keep the person at the keyboard for as long as the server likes.
 */
export const MAX_QUESTIONS_PER_ROUND = 20;

/**
 * Build the `inputResponses` for one `InputRequiredResult`: every key of
 * `inputRequests` answered, under the same key. All requests are checked
 * first, so a request the client cannot serve stops the call before anyone
 * is asked; questions are then put to the answerer one at a time.
 *
 * A round with more than {@link MAX_QUESTIONS_PER_ROUND} questions to show is
 * declined whole without asking (past four times that many requests, without
 * checking each form: only each request's method). Once one question is answered `cancel` (the
 * person dismissed it, or it timed out), the round's remaining questions are
 * answered `cancel` without being asked: dismissing one question dismisses
 * the round, so a server cannot keep a person answering by asking many.
 *
 * @throws {ProtocolError} for a request that is not `elicitation/create`
 * @throws {InvalidAnswerError} when the answerer keeps returning invalid content
 * @throws {AbortedError} when the call's signal aborts
 */
export async function answerInputRequests(
  inputRequests: Record<string, unknown>,
  ctx: RoundContext,
): Promise<Record<string, ElicitResponse>> {
  const entries = Object.entries(inputRequests);
  // Far more requests than a round may put to a person: none is read further than its method (a
  // hundred thousand forms took seconds of checks, each to be declined anyway).
  if (entries.length > MAX_QUESTIONS_PER_ROUND * 4) return declineAll(entries, ctx);
  let plans = entries.map(([key, request]) => plan(key, request, ctx));
  const asked = plans.filter((p) => p.kind !== 'decline').length;
  if (asked > MAX_QUESTIONS_PER_ROUND) {
    const reason = `the round asks ${asked} questions; this client puts at most ${MAX_QUESTIONS_PER_ROUND} to a person in one round`;
    plans = plans.map((p): Plan => {
      if (p.kind === 'decline') return p;
      return {
        key: p.key,
        kind: 'decline',
        mode: p.kind,
        reasons: [reason],
        message: p.question.message,
      };
    });
  }
  // Entries, not assignment: a key such as "__proto__" must stay an own key of inputResponses.
  const responses: [string, ElicitResponse][] = [];
  let dismissed = false;
  for (const p of plans) {
    if (p.kind === 'decline') {
      ctx.emit({
        type: 'auto-declined',
        ...about(p.key, ctx),
        mode: p.mode,
        reasons: p.reasons,
        ...(p.message !== undefined ? { message: p.message } : {}),
      });
      responses.push([p.key, { action: 'decline' }]);
    } else if (dismissed) {
      responses.push([p.key, { action: 'cancel' }]);
    } else if (p.kind === 'form' && ctx.answerer?.form) {
      const form = ctx.answerer.form.bind(ctx.answerer);
      responses.push([p.key, await answerForm(p.key, p.question, form, ctx)]);
    } else if (p.kind === 'url' && ctx.answerer?.url) {
      responses.push([p.key, await answerUrl(p.key, p.question, ctx.answerer.url, ctx)]);
    }
    dismissed ||= responses.at(-1)?.[1].action === 'cancel' && p.kind !== 'decline';
  }
  return Object.fromEntries(responses);
}

/** Every request of `entries` declined for the round's size, after the protocol check of {@link plan}. */
function declineAll(
  entries: [string, unknown][],
  ctx: RoundContext,
): Record<string, ElicitResponse> {
  const reason = `the round asks ${entries.length} questions; this client puts at most ${MAX_QUESTIONS_PER_ROUND} to a person in one round`;
  const responses: [string, ElicitResponse][] = [];
  for (const [key, request] of entries) {
    if (!isObject(request) || request.method !== 'elicitation/create') plan(key, request, ctx);
    const params = isObject(request) && isObject(request.params) ? request.params : {};
    ctx.emit({
      type: 'auto-declined',
      ...about(key, ctx),
      mode: typeof params.mode === 'string' ? params.mode : 'form',
      reasons: [reason],
      ...(typeof params.message === 'string' ? { message: params.message } : {}),
    });
    responses.push([key, { action: 'decline' }]);
  }
  return Object.fromEntries(responses);
}
