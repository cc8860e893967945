/**
 * @mrtr/gate: put a person's confirmation in front of a destructive MCP tool
 * with Multi Round-Trip Requests (MCP 2026-07-28), so that no model, client,
 * replayed request or second server instance can turn one "yes" into a
 * different or a second mutation.
 *
 * @example
 * ```ts
 * import { ConfirmationGate } from '@mrtr/gate';
 * import { TicketSealer } from '@mrtr/ticket';
 * import { MemoryReplayStore } from '@mrtr/replay';
 *
 * const gate = new ConfirmationGate({
 *   sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: process.env.MRTR_SECRET! }] }),
 *   store: new MemoryReplayStore(),
 * });
 * // inside a tools/call handler:
 * return gate.run(request, {
 *   key: 'delete_choice',
 *   candidateField: 'note_id',
 *   prepare: async () => ({ candidates: ids, app: null }),
 *   question: ({ candidates }) => ({ message: 'Choose the note to delete.', requestedSchema: { type: 'object', properties: { note_id: { type: 'string', enum: candidates! } }, required: ['note_id'] } }),
 *   perform: async ({ content }) => { await remove(content.note_id as string); return textResult('Deleted.'); },
 * });
 * ```
 * @packageDocumentation
 */

export type {
  ApprovalBinding,
  ApprovalChannel,
  ApprovalDecision,
  ConfirmationLevel,
  PendingApproval,
} from './approval.js';
export {
  type AuditRecorder,
  type AuditSink,
  AuditSinkError,
  type AuditWriter,
  type GateAuditEvent,
  type GateOutcome,
} from './audit.js';
export {
  ConfirmationGate,
  type ConfirmationGateOptions,
  FORM_ELICITATION_REQUIRED,
} from './gate.js';
export { SpanAttribute, TRACE_META_KEYS, TRACER_NAME } from './trace.js';
export {
  type GateQuestion,
  type GateRequest,
  type GateSpec,
  type PerformInput,
  type Preparation,
  type SealedContext,
  StaleTargetError,
} from './types.js';
