import { styleText } from 'node:util';
import {
  cancel,
  confirm,
  intro,
  isCancel,
  log,
  multiselect,
  outro,
  select,
  text,
} from '@clack/prompts';
import type { Answerer, FormAnswer, FormQuestion, ServerIdentity, UrlQuestion } from '@mrtr/client';
import { type FormValue, type RequestedSchema, validateFormContent } from '@mrtr/wire';
import { parseDecimal } from './args.js';
import {
  bounded,
  cut,
  MAX_DESCRIPTION_COLUMNS,
  MAX_URL_CHARS,
  oneLine,
  plain,
  quotedChoice,
  serverName,
  shownLabel,
  shownMessage,
  showValue,
  titleOf,
} from './display.js';

type Field = RequestedSchema['properties'][string];
type Content = Record<string, FormValue | undefined>;

const CANCELLED = Symbol('cancelled');
const NO_ANSWER = '\u0000no-answer';

/** What the terminal answerer remembers across questions. */
export interface TerminalState {
  /** The person dismissed a question (Ctrl-C or Esc), as opposed to a timeout. */
  personCancelled: boolean;
}

/**
 * Most choices a list shows at once (it scrolls): a label may take two
 * lines of a narrow terminal, and a long list must not push the header that
 * names who asks off the screen.
 */
const MAX_SHOWN_CHOICES = 8;

/** The server as the header names it: its own name, bounded and quoted ({@link serverName}), then the URL mrtr was given. */
function who(server: ServerIdentity): string {
  const name = server.title ?? server.name;
  return name ? `${serverName(name)} (its own name) at ${server.url}` : server.url;
}

/**
 * A menu's question with the host that asks: the message above may be long
 * enough to scroll the header away, so the host mrtr talks to is repeated
 * where the person chooses.
 */
function asking(question: string, server: ServerIdentity): string {
  return `${question} ${styleText('dim', `(asked by ${server.host})`)}`;
}

function header(q: FormQuestion | UrlQuestion): void {
  intro(`Question from ${who(q.server)}`);
  log.message(
    styleText('dim', `asked while running ${q.request.method} ${oneLine(q.request.target)}`),
  );
  log.message(shownMessage(q.message));
}

function fieldLabel(name: string, field: Field, required: boolean): string {
  const title = shownLabel(titleOf(name, field));
  const detail = field.description
    ? `\n${shownLabel(field.description, MAX_DESCRIPTION_COLUMNS)}`
    : '';
  return `${title}${required ? '' : styleText('dim', ' (optional)')}${detail}`;
}

/** The options of a single- or multi-select field: value and label. */
function optionsOf(field: Field): { value: string; label: string }[] {
  if ('oneOf' in field)
    return field.oneOf.map((o) => ({ value: o.const, label: shownLabel(o.title) }));
  if ('enum' in field) {
    const names = 'enumNames' in field ? field.enumNames : undefined;
    // A value shown as its own label keeps its spaces: two values must not look alike.
    return field.enum.map((v, i) => ({
      value: v,
      label: names?.[i] !== undefined ? shownLabel(names[i]) : bounded(v),
    }));
  }
  if (field.type === 'array') {
    const items = field.items;
    return 'enum' in items
      ? items.enum.map((v) => ({ value: v, label: bounded(v) }))
      : items.anyOf.map((o) => ({ value: o.const, label: shownLabel(o.title) }));
  }
  return [];
}

/**
 * A value to pre-fill or pre-select only when it shows exactly as it would be
 * sent ({@link plain}); otherwise the person is told what it was, escaped, and
 * the prompt starts empty: nobody sends characters they could not see.
 * @param from where the value came from, for the note
 */
function prefill(label: string, value: string | undefined, from: string): string | undefined {
  if (value === undefined || plain(value)) return value;
  log.warn(
    `${label}: ${from} is not filled in, because it holds characters a terminal cannot show as they are: "${bounded(value, MAX_DESCRIPTION_COLUMNS)}". Answer it yourself.`,
  );
  return undefined;
}

/** Why `value` fails this one field, or undefined; the same validator the client runs before sending. */
function fieldIssue(
  name: string,
  field: Field,
  required: boolean,
  value: unknown,
): string | undefined {
  const check = validateFormContent(
    { type: 'object', properties: { [name]: field }, required: required ? [name] : [] },
    value === undefined ? {} : { [name]: value },
  );
  return check.ok
    ? undefined
    : bounded(check.issues.map((i) => i.reason).join('; '), MAX_DESCRIPTION_COLUMNS);
}

async function askField(
  name: string,
  field: Field,
  required: boolean,
  current: FormValue | undefined,
  signal: AbortSignal,
): Promise<FormValue | undefined | typeof CANCELLED> {
  const message = fieldLabel(name, field, required);
  const label = shownLabel(titleOf(name, field));
  const from = current !== undefined ? 'your last answer' : "the server's suggested answer";
  if ('enum' in field || 'oneOf' in field) {
    const options = optionsOf(field).map((o) => ({
      ...o,
      hint: o.label !== o.value ? bounded(o.value) : undefined,
    }));
    if (!required) options.push({ value: NO_ANSWER, label: '(no answer)', hint: undefined });
    const wanted = typeof current === 'string' ? current : field.default;
    // Pre-select only an offered choice that shows as it is.
    const initial = options.some((o) => o.value === wanted)
      ? prefill(label, wanted, from)
      : undefined;
    const v = await select<string>({
      message,
      options: options.map(({ hint, ...o }) => (hint ? { ...o, hint } : o)),
      ...(initial !== undefined ? { initialValue: initial } : {}),
      maxItems: MAX_SHOWN_CHOICES,
      signal,
    });
    if (isCancel(v)) return CANCELLED;
    return v === NO_ANSWER ? undefined : v;
  }
  switch (field.type) {
    case 'boolean': {
      const v = await confirm({
        message,
        initialValue:
          typeof current === 'boolean'
            ? current
            : typeof field.default === 'boolean'
              ? field.default
              : false,
        signal,
      });
      return isCancel(v) ? CANCELLED : v;
    }
    case 'array': {
      const listed = optionsOf(field);
      // The answered line joins the chosen labels with ", ": when a label may hold one, or a character
      // drawn like one (any but ASCII), every label is quoted.
      const options = listed.some((o) => /[,\u0080-\u{10ffff}]/u.test(o.label))
        ? listed.map((o) => ({ ...o, label: quotedChoice(o.label) }))
        : listed;
      // Each value once: the check below reads every choice for each.
      const wanted: unknown[] = [
        ...new Set(Array.isArray(current) ? current : (field.default ?? [])),
      ];
      // Pre-select only offered choices that show as they are: clack would send any other value unseen.
      const initialValues = wanted.filter(
        (w): w is string =>
          typeof w === 'string' &&
          options.some((o) => o.value === w) &&
          prefill(label, w, from) !== undefined,
      );
      for (;;) {
        const v = await multiselect<string>({
          message,
          options,
          initialValues,
          required: false,
          maxItems: MAX_SHOWN_CHOICES,
          signal,
        });
        if (isCancel(v)) return CANCELLED;
        const issue = fieldIssue(name, field, required, v);
        if (!issue) return v;
        log.warn(`${label} ${issue}`);
      }
    }
    case 'number':
    case 'integer': {
      const bounds = [
        field.minimum !== undefined ? `≥ ${field.minimum}` : '',
        field.maximum !== undefined ? `≤ ${field.maximum}` : '',
      ].filter(Boolean);
      const wanted = typeof current === 'number' ? current : field.default;
      const initial = typeof wanted === 'number' && Number.isFinite(wanted) ? wanted : undefined;
      const v = await text({
        message,
        placeholder: [field.type, ...bounds].join(' '),
        ...(initial !== undefined ? { initialValue: String(initial) } : {}),
        validate: (s) => {
          if (!s) return required ? 'is required' : undefined;
          const n = parseDecimal(s, field.type);
          if (n === undefined) return `must be a decimal ${field.type}, such as 42`;
          return fieldIssue(name, field, required, n);
        },
        signal,
      });
      if (isCancel(v)) return CANCELLED;
      return v ? parseDecimal(v, field.type) : undefined;
    }
    default: {
      const s = field as Extract<Field, { minLength?: number }>;
      const hints = [
        s.format,
        s.minLength !== undefined
          ? `at least ${s.minLength} ${s.minLength === 1 ? 'character' : 'characters'}`
          : '',
        s.maxLength !== undefined
          ? `at most ${s.maxLength} ${s.maxLength === 1 ? 'character' : 'characters'}`
          : '',
      ].filter(Boolean);
      const wanted = typeof current === 'string' ? current : s.default;
      const initial = typeof wanted === 'string' ? prefill(label, wanted, from) : undefined;
      const v = await text({
        message,
        ...(hints.length ? { placeholder: shownLabel(hints.join(', ')) } : {}),
        ...(initial !== undefined ? { initialValue: initial } : {}),
        validate: (value) => {
          if (!value) return required ? 'is required' : undefined;
          return fieldIssue(name, field, required, value);
        },
        signal,
      });
      if (isCancel(v)) return CANCELLED;
      return v ? v : undefined;
    }
  }
}

function review(schema: RequestedSchema, content: Content): void {
  const lines = Object.entries(schema.properties).map(([name, field]) => {
    let shown = cut(showValue(content[name]), MAX_DESCRIPTION_COLUMNS);
    const options = optionsOf(field);
    const label = options.find((o) => o.value === content[name])?.label;
    if (label && label !== content[name]) shown = `${label} (${shown})`;
    return `${shownLabel(titleOf(name, field))}: ${styleText('bold', shown)}`;
  });
  log.info(['Your answers:', ...lines].join('\n'));
}

async function answerForm(q: FormQuestion, state: TerminalState): Promise<FormAnswer> {
  const { signal, requestedSchema: schema } = q;
  const cancelled = (): FormAnswer => {
    state.personCancelled ||= !signal.aborted;
    return { action: 'cancel' };
  };
  header(q);
  if (q.retry) {
    log.warn(
      [
        'Your last answer was not sent; it was not valid:',
        ...q.retry.issues.map(
          (i) => `${i.field ? shownLabel(i.field) : 'answer'} ${oneLine(i.reason)}`,
        ),
      ].join('\n'),
    );
  }
  const first = await select({
    message: asking('What would you like to do?', q.server),
    options: [
      { value: 'answer', label: 'Answer' },
      { value: 'decline', label: 'Decline', hint: 'tell the server no' },
      { value: 'cancel', label: 'Cancel', hint: 'dismiss without choosing' },
    ],
    signal,
  });
  if (isCancel(first)) return cancelled();
  // Chosen from the menu, Cancel is an answer like Decline: sent, and the exit code is the result's.
  if (first === 'cancel' || first === 'decline') return { action: first };

  const required = new Set(schema.required ?? []);
  const content: Content = {};
  for (const [name, v] of Object.entries(q.retry?.content ?? {})) {
    if (Object.hasOwn(schema.properties, name)) content[name] = v as FormValue;
  }
  for (const [name, field] of Object.entries(schema.properties)) {
    const v = await askField(name, field, required.has(name), content[name], signal);
    if (v === CANCELLED) return cancelled();
    content[name] = v;
  }
  for (;;) {
    review(schema, content);
    const next = await select({
      message: asking('Send these answers?', q.server),
      options: [
        { value: 'send', label: 'Send' },
        { value: 'change', label: 'Change an answer' },
        { value: 'decline', label: 'Decline', hint: 'tell the server no' },
        { value: 'cancel', label: 'Cancel', hint: 'dismiss without choosing' },
      ],
      signal,
    });
    if (isCancel(next)) return cancelled();
    if (next === 'cancel' || next === 'decline') return { action: next };
    if (next === 'send') {
      const answer = Object.fromEntries(
        Object.entries(content).filter(([, v]) => v !== undefined),
      ) as Record<string, FormValue>;
      const check = validateFormContent(schema, answer);
      // The person chose Send after reviewing: the only place this terminal accepts.
      if (check.ok) return { action: 'accept', content: check.value };
      log.warn(
        check.issues
          .map((i) => `${shownLabel(i.field)} ${bounded(i.reason, MAX_DESCRIPTION_COLUMNS)}`)
          .join('\n'),
      );
      continue;
    }
    const which = await select({
      message: 'Which answer?',
      options: Object.entries(schema.properties).map(([name, field]) => ({
        value: name,
        label: shownLabel(titleOf(name, field)),
      })),
      maxItems: MAX_SHOWN_CHOICES,
      signal,
    });
    if (isCancel(which)) return cancelled();
    const field = schema.properties[which] as Field;
    const v = await askField(which, field, required.has(which), content[which], signal);
    if (v === CANCELLED) return cancelled();
    content[which] = v;
  }
}

async function askUrl(q: UrlQuestion, state: TerminalState) {
  header(q);
  const shownUrl = oneLine(q.url);
  if (shownUrl.length > MAX_URL_CHARS) {
    // Shown cut, the link would not be the one opened; shown whole, it could fill the screen.
    log.warn(
      `The server sent a URL of ${shownUrl.length} characters: mrtr shows and lets you open URLs of at most ${MAX_URL_CHARS}, so it was declined without asking you. It begins: ${cut(shownUrl, MAX_DESCRIPTION_COLUMNS)}`,
    );
    return { action: 'decline' as const };
  }
  log.message(`URL:  ${shownUrl}\nHost: ${styleText(['bold', 'underline'], oneLine(q.host))}`);
  for (const w of q.warnings) log.warn(oneLine(w));
  const v = await select({
    message: asking('Go to this URL in your browser?', q.server),
    options: [
      { value: 'accept' as const, label: 'I will open it', hint: 'mrtr shows the link to open' },
      { value: 'decline' as const, label: 'Decline', hint: 'tell the server no' },
      { value: 'cancel' as const, label: 'Cancel', hint: 'dismiss without choosing' },
    ],
    signal: q.signal,
  });
  if (isCancel(v)) {
    state.personCancelled ||= !q.signal.aborted;
    return { action: 'cancel' as const };
  }
  return { action: v };
}

/**
 * After the person consented, the link to open and a wait until they are back
 * from the browser. Ctrl-C or Esc here ends the call as at any other prompt
 * ({@link TerminalState.personCancelled}); choosing Cancel is an answer, as in
 * a menu. Either way the client sends `cancel` and reports `open-failed` with
 * the thrown message, which `main.ts` prints.
 */
async function openUrl(url: string, signal: AbortSignal, state: TerminalState) {
  // The terminal cannot show a page; the person opens it in their own browser, which mrtr cannot read.
  log.step(`Open this URL in your browser:\n${oneLine(url)}`);
  const go = await confirm({
    message: 'Continue once you have finished in the browser',
    active: 'Continue',
    inactive: 'Cancel',
    signal,
  });
  if (isCancel(go)) {
    // An aborted call is the client's to report; only the person's Ctrl-C or Esc ends the call here.
    if (signal.aborted) throw new Error('the call was stopped');
    state.personCancelled = true;
    throw new Error('you dismissed the question with Ctrl-C or Esc, which ends the call');
  }
  if (!go) throw new Error('you chose Cancel');
  log.step('Sending your answer.');
}

/**
 * The person at this terminal, as an `Answerer`: every question is shown with
 * the server asking, its message (bounded by {@link shownMessage}), a field
 * per property, a review before sending, and decline and cancel. Ctrl-C or
 * Esc cancels the question and ends the call: the client cancels the rest of
 * the round unasked, and every later question is answered `cancel` without
 * being shown. Only when stdin is a terminal: otherwise there is nobody to
 * ask, and no elicitation is declared.
 */
export function terminalAnswerer(): { answerer: Answerer; state: TerminalState } {
  const state: TerminalState = { personCancelled: false };
  if (!process.stdin.isTTY) return { answerer: {}, state };
  // After Ctrl-C nothing more is put to the person: a server asking again cannot keep them here.
  let told = false;
  const ended = () => {
    if (!told) {
      told = true;
      log.warn(
        'The server asked again after you ended the call: answered cancel without showing it.',
      );
    }
    return { action: 'cancel' } as const;
  };
  return {
    state,
    answerer: {
      form: async (q) =>
        state.personCancelled ? ended() : closing(await answerForm(q, state), q.signal),
      url: {
        // The answer goes only after the browser: `open` waits for the person to come back.
        ask: async (q) =>
          state.personCancelled
            ? ended()
            : closing(await askUrl(q, state), q.signal, 'Finish in your browser.'),
        open: (url, signal) => openUrl(url, signal, state),
      },
    },
  };
}

/** Close the question's frame with what is being sent. */
function closing<A extends { action: string }>(
  answer: A,
  signal: AbortSignal,
  accepted = 'Sending your answer.',
): A {
  if (signal.aborted) return answer; // timed out: the client reports it
  if (answer.action === 'cancel')
    cancel('Cancelled: the server is told you dismissed the question.');
  else if (answer.action === 'decline') outro('Declined: the server is told no.');
  else outro(accepted);
  return answer;
}
