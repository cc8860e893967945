import type { FormIssue } from '@mrtr/wire';
import type { ServerNotification } from './transport.js';

/**
 * Something the client did or saw during a call that its caller should know
 * and may record for audit:
 * - `auto-declined`: an input request the client cannot show faithfully (a
 *   form outside the flat subset, a mode it did not declare, a URL it must
 *   not open) was answered `decline` without asking anyone;
 * - `timed-out`: nobody answered within `answerTimeoutMs` (milliseconds); the
 *   answer sent is `cancel`;
 * - `invalid-answer`: the answerer's content failed the `requestedSchema`;
 *   nothing was sent and the question was asked again;
 * - `open-failed`: the URL could not be opened after consent; the answer sent is `cancel`;
 * - `round`: a response arrived (`resultType` as read, `keys` of its `inputRequests`);
 * - `notification`: a notification on the request's SSE stream;
 * - `ignored`: a message the client ignored (a server request on the stream).
 */
export type ClientEvent =
  | { type: 'auto-declined'; key: string; mode: string; reasons: string[] }
  | { type: 'timed-out'; key: string; afterMs: number }
  | { type: 'invalid-answer'; key: string; issues: FormIssue[] }
  | { type: 'open-failed'; key: string; reason: string }
  | { type: 'round'; round: number; resultType: string; keys: string[] }
  | { type: 'notification'; notification: ServerNotification }
  | { type: 'ignored'; reason: string };

/** An `auto-declined` {@link ClientEvent}. */
export type AutoDeclined = Extract<ClientEvent, { type: 'auto-declined' }>;
