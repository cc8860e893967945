/**
 * @mrtr/audit: the JSON-lines audit trail of `@mrtr/gate`, on stdout, stderr
 * or a file (through pino). It fails closed: a record that cannot be written
 * stops the round before any mutation. It never blocks the event loop: a
 * destination that takes nothing fails the rounds that write to it (after
 * `timeoutMs`), never the server. The PostgreSQL table sink, whose rows
 * commit with the replay claim and the mutation, is `@mrtr/audit-postgres`.
 *
 * @example
 * ```ts
 * import { JsonLinesAuditSink } from '@mrtr/audit';
 * import { ConfirmationGate } from '@mrtr/gate';
 * import { MemoryReplayStore } from '@mrtr/replay';
 * import { TicketSealer } from '@mrtr/ticket';
 *
 * const gate = new ConfirmationGate({
 *   sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: process.env.MRTR_SECRET ?? '' }] }),
 *   store: new MemoryReplayStore(),
 *   audit: new JsonLinesAuditSink({ destination: process.env.MRTR_AUDIT_FILE ?? 'stdout' }),
 * });
 * ```
 * @module @mrtr/audit
 * @packageDocumentation
 */
export {
  AUDIT_LINE_MESSAGE,
  AuditDestinationBusyError,
  JsonLinesAuditSink,
  type JsonLinesAuditSinkOptions,
  type LineDestination,
} from './json-lines.js';
