import type { ClientCapabilities, FormIssue, FormValue, RequestedSchema } from '@mrtr/wire';
import type { UrlFacts } from './url.js';

/** Which server is asking: what a person must be shown with every question (`client/elicitation`, "User Interaction Model"). */
export interface ServerIdentity {
  /** The MCP endpoint URL the client is talking to: the identity the client can vouch for. */
  url: string;
  /** Its origin, e.g. `https://notes.example.com`. */
  origin: string;
  /** Its host, e.g. `notes.example.com`. */
  host: string;
  /** `serverInfo.name` from `server/discover`, when the client asked: self-reported by the server. */
  name?: string;
  /** `serverInfo.title`, when given: self-reported by the server. */
  title?: string;
}

/** Which call a question belongs to. */
export interface AskingRequest {
  /** `tools/call`, `prompts/get` or `resources/read`. */
  method: string;
  /** The tool or prompt name, or the resource URI. */
  target: string;
  /** The arguments the call was made with (the same in every round). */
  arguments?: Record<string, unknown>;
}

/** What every question carries. */
interface QuestionBase {
  /** The `inputRequests` key this question answers. */
  key: string;
  /** Which server is asking. */
  server: ServerIdentity;
  /** Which call is asking. */
  request: AskingRequest;
  /** The server's `message`, verbatim: show it without rewording. */
  message: string;
  /** 1 for the first round of the call, 2 for the first retry's answer, … */
  round: number;
  /**
   * Aborted when the question times out or the call is aborted. An answerer
   * should close its prompt when it fires; the client does not wait for it
   * and records `cancel` (timeout) or ends the call (abort).
   */
  signal: AbortSignal;
}

/** A form-mode `elicitation/create` whose `requestedSchema` is within the flat subset. */
export interface FormQuestion extends QuestionBase {
  mode: 'form';
  /** The fields to show, in order; validated against the 2026-07-28 subset. */
  requestedSchema: RequestedSchema;
  /**
   * When the previous answer failed validation: why, field by field, and what
   * it was, so the person can correct it. Nothing was sent.
   */
  retry?: { issues: FormIssue[]; content: Record<string, unknown> };
}

/**
 * A form answer: `accept` with the content, `decline` (the person said no) or
 * `cancel` (dismissed without choosing), as `ElicitResult.action`.
 */
export type FormAnswer =
  | { action: 'accept'; content: Record<string, FormValue> }
  | { action: 'decline' }
  | { action: 'cancel' };

/** A URL-mode `elicitation/create`: the person must see the full URL and host and consent first. */
export interface UrlQuestion extends QuestionBase, UrlFacts {
  mode: 'url';
}

/** Consent to open the URL (`accept`), refusal (`decline`), or dismissal (`cancel`). */
export interface UrlAnswer {
  action: 'accept' | 'decline' | 'cancel';
}

/**
 * Puts questions to a person and returns what they answered. This is the only
 * source of answers: the client never fills in, confirms or consents on a
 * person's behalf. Implement only what you can show: the client declares
 * `elicitation.form` only when {@link Answerer.form} exists and
 * `elicitation.url` only when {@link Answerer.url} exists, in each
 * request's `_meta`.
 *
 * An answerer must never be backed by a language model or by the code that
 * chose the call: a confirmation its caller can supply confirms nothing.
 */
export interface Answerer {
  /**
   * Show a flat form (message verbatim, a field per property, review before
   * sending, decline and cancel) and return the person's answer. The content
   * is validated against the `requestedSchema` before anything is sent; an
   * invalid answer is asked again with {@link FormQuestion.retry}.
   */
  form?(question: FormQuestion): Promise<FormAnswer>;
  /** URL mode: ask consent, then open. */
  url?: {
    /** Show the full URL, the highlighted host and the warnings; return the person's choice. */
    ask(question: UrlQuestion): Promise<UrlAnswer>;
    /**
     * Open the URL for the person, outside the client (a browser, not a web
     * view the client can read). Called only after `ask` returned `accept`.
     * The retry is sent once it resolves, so it may wait until the person
     * says they are done on the page, for as long as they take (no
     * `answerTimeoutMs`: signing in and registering a first passkey take
     * time); `signal` aborts when the call is aborted, which then rejects
     * with `AbortedError`. It throwing sends `cancel`.
     */
    open(url: string, signal: AbortSignal): Promise<void> | void;
  };
}

/**
 * The capabilities to declare for a call answered by `answerer`
 * (`client/elicitation`, "Capabilities"): `elicitation.form` when it can show
 * forms, `elicitation.url` when it can ask consent for URLs, nothing otherwise.
 */
export function capabilitiesFor(answerer: Answerer | undefined): ClientCapabilities {
  const elicitation: Record<string, Record<string, never>> = {};
  if (typeof answerer?.form === 'function') elicitation.form = {};
  if (answerer?.url && typeof answerer.url.ask === 'function') elicitation.url = {};
  return Object.keys(elicitation).length > 0 ? { elicitation } : {};
}
