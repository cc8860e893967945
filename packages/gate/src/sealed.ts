import type { Json } from '@mrtr/replay';

/**
 * The `data` claim of a ticket the gate mints: the compact trace context
 * alone (a string, so a ticket without a seal is as small as before), or
 * `{ s, t? }` when the tool sealed facts of its own (`Preparation.seal`):
 * `s` the seal, `t` the trace context.
 */
export function ticketData(trace: string | undefined, seal: Json | undefined): Json | undefined {
  if (seal === undefined) return trace;
  return trace === undefined ? { s: seal } : { s: seal, t: trace };
}

/** The trace context and the tool's seal of an opened ticket's `data` claim (see {@link ticketData}). */
export function readTicketData(data: unknown): { trace?: string; seal?: Json } {
  if (typeof data === 'string') return { trace: data };
  if (data === null || typeof data !== 'object' || Array.isArray(data) || !('s' in data)) return {};
  const { s, t } = data as { s: Json; t?: unknown };
  return typeof t === 'string' ? { seal: s, trace: t } : { seal: s };
}
