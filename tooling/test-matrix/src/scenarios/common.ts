import { DEFAULT_MAX_SKEW_SECONDS, DEFAULT_TTL_SECONDS } from '@mrtr/ticket';
import type { RunningCombination } from '../combination.js';

/**
 * How far back the clock goes to mint an expired ticket, milliseconds: past
 * the ticket lifetime and the tolerated skew, with a minute to spare.
 */
export const EXPIRED_OFFSET_MS = (DEFAULT_TTL_SECONDS + DEFAULT_MAX_SKEW_SECONDS + 60) * 1000;

/** Run `round` with both instances' clock `offsetMs` off, then put it back. */
export async function atOffset<T>(
  h: RunningCombination,
  offsetMs: number,
  round: () => Promise<T>,
): Promise<T> {
  h.clock.offsetMs = offsetMs;
  try {
    return await round();
  } finally {
    h.clock.offsetMs = 0;
  }
}

/** Refusals of a used nonce: already used, or still being carried out by another request. */
export const USED_OR_IN_PROGRESS = /already used|being carried out by another request/;
