import type { FormIssue } from '@mrtr/wire';
import type { AskingRequest } from './answerer.js';
import type { ServerNotification } from './transport.js';

/** Which call and round a question event belongs to, for an audit record. */
export interface QuestionContext {
  /** The `inputRequests` key. */
  key: string;
  /** The call that asked (method, tool or prompt name or URI, arguments). */
  request: AskingRequest;
  /** 1 for the first round of the call, … */
  round: number;
}

/**
 * Something the client did or saw during a call that its caller should know
 * and may record for audit (`onEvent` of the client or of the call):
 * - `auto-declined`: an input request the client cannot show faithfully (a
 *   form outside the flat subset, a mode it did not declare, a URL it must
 *   not open) was answered `decline` without asking anyone; `reasons` say why,
 *   `message` what the server asked;
 * - `timed-out`: nobody answered within `answerTimeoutMs` (milliseconds); the
 *   answer sent is `cancel`, and an answer given later is never sent;
 * - `invalid-answer`: the answerer's content failed the `requestedSchema`;
 *   nothing was sent and the question was asked again;
 * - `open-failed`: the URL could not be opened after consent; the answer sent is `cancel`;
 * - `retried`: a request was sent again once, after `-32022`
 *   (`unsupported-version`) or, for `tools/call`, after `-32020` and a fresh
 *   `tools/list` (`header-mismatch`); or re-issued after its response was
 *   lost (`response-lost`, at most `MAX_REISSUES` times: reads, and a
 *   `tools/call` retry that echoes a `requestState`);
 * - `round`: a response arrived (`resultType` as read, `keys` of its `inputRequests`);
 * - `notification`: a notification on the request's SSE stream;
 * - `ignored`: a message the client ignored (a server request on the stream).
 */
export type ClientEvent =
  | ({
      type: 'auto-declined';
      mode: string;
      reasons: string[];
      /** The server's `message`, when it sent one: what was declined. */
      message?: string;
    } & QuestionContext)
  | ({ type: 'timed-out'; afterMs: number } & QuestionContext)
  | ({ type: 'invalid-answer'; issues: FormIssue[] } & QuestionContext)
  | ({ type: 'open-failed'; reason: string } & QuestionContext)
  | {
      type: 'retried';
      method: string;
      reason: 'unsupported-version' | 'header-mismatch' | 'response-lost';
      detail: string;
    }
  | { type: 'round'; round: number; resultType: string; keys: string[] }
  | { type: 'notification'; notification: ServerNotification }
  | { type: 'ignored'; reason: string };

/** An `auto-declined` {@link ClientEvent}. */
export type AutoDeclined = Extract<ClientEvent, { type: 'auto-declined' }>;
