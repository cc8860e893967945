/**
 * @mrtr/gate: put a person's confirmation in front of a destructive MCP tool
 * with Multi Round-Trip Requests (MCP 2026-07-28), so that no model, client,
 * replayed request or second server instance can turn one "yes" into a
 * different or a second mutation.
 *
 * @example
 * ```ts
 * import { ConfirmationGate, confirm } from '@mrtr/gate';
 * import { MemoryReplayStore } from '@mrtr/replay';
 * import { TicketSealer } from '@mrtr/ticket';
 * import { textResult } from '@mrtr/wire';
 * import { z } from 'zod';
 *
 * const gate = new ConfirmationGate({
 *   sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: process.env.MRTR_SECRET as string }] }),
 *   store: new MemoryReplayStore(),
 * });
 * export const deleteThing = gate.tool({
 *   name: 'delete_thing',
 *   description: 'Delete a thing; a person confirms.',
 *   args: z.object({ id: z.string().regex(/^[\w-]{1,64}$/) }), // an id: nothing a database can't keep
 *   form: { confirm: confirm({ title: 'Yes, delete it' }) },
 *   ask: async ({ args }) => ({ message: `Delete ${args.id}? This cannot be undone.`, view: args.id }),
 *   perform: async ({ view }) => textResult(`Deleted ${view}.`),
 * });
 * ```
 * @module @mrtr/gate
 * @packageDocumentation
 */

export {
  type ApprovalBinding,
  type ApprovalChannel,
  type ApprovalDecision,
  type ConfirmationLevel,
  isApprovalField,
  MAX_APPROVAL_FIELD_LENGTH,
  MAX_APPROVAL_MESSAGE_LENGTH,
  type PendingApproval,
} from './approval.js';
export type { ArgsSchema, InputSchema } from './args.js';
export {
  type AuditRecorder,
  type AuditSink,
  AuditSinkError,
  type AuditWriter,
  type GateAuditEvent,
  type GateOutcome,
} from './audit.js';
export { ReceiptIssuerError } from './errors.js';
export {
  type AnswerOf,
  type Choice,
  type ChooseField,
  type ConfirmField,
  choose,
  confirm,
  type FieldLabels,
  type FlagField,
  type FormField,
  type FormFields,
  flag,
  preview,
  quoted,
  type TextField,
  type TypedField,
  text,
  typeToConfirm,
} from './fields.js';
export { FORM_ELICITATION_REQUIRED, REQUIRED_CAPABILITIES } from './flow.js';
export { ConfirmationGate, type ConfirmationGateOptions } from './gate.js';
export type { AskAgainReason, GateReason, RefusalReason } from './reasons.js';
export { MAX_RECORDED_TEXT } from './recorded-text.js';
export { MAX_RECORDED_ANSWER, MAX_RECORDED_ARGUMENTS } from './round.js';
export {
  type Asking,
  type CallInput,
  type CheckCall,
  type GatedTool,
  type GatedToolDeclaration,
  gatedTool,
  type PerformCall,
  WithoutAsking,
  withoutAsking,
} from './tool.js';
export { SpanAttribute, TRACE_META_KEYS, TRACER_NAME } from './trace.js';
export {
  type AskContext,
  type Confirmation,
  type FormContent,
  type GateQuestion,
  type GateRequest,
  type GateSpec,
  type LevelPolicy,
  type PerformInput,
  type Preparation,
  type ReceiptIssuer,
  type ReceiptRequest,
  StaleTargetError,
} from './types.js';
