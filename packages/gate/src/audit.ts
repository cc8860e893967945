/** How one round of a gated operation ended. */
export type GateOutcome =
  | 'asked'
  | 'asked_again'
  | 'refused'
  | 'declined'
  | 'cancelled'
  | 'completed'
  | 'replayed'
  | 'failed';

/**
 * One audit record per round. Rounds of one operation share `nonce`. Never
 * contains the sealed ticket or a secret.
 */
export interface GateAuditEvent {
  /** How the round ended. */
  outcome: GateOutcome;
  /** Why, for `asked_again`, `refused` and `failed` (a fixed reason code or a notice). */
  reason?: string;
  /** Principal id of the caller. */
  principal: string;
  /** `method:name` of the operation, e.g. `tools/call:notes_delete`. */
  operation: string;
  /** `sha256:` digest of the canonical arguments. */
  argumentsDigest: string;
  /** The ticket nonce, when a ticket was minted or opened. */
  nonce?: string;
  /** The question text as sent, when one was sent. */
  question?: string;
  /** The action and content answered, when an answer was read. */
  answer?: { action: string; content?: Record<string, unknown> };
  /** When the round ended, milliseconds since the epoch. */
  at: number;
}

/** Receives audit events. A sink that throws makes the round fail before any mutation. */
export type AuditSink = (event: GateAuditEvent) => void | Promise<void>;
