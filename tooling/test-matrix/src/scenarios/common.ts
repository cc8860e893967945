import { DEFAULT_MAX_SKEW_SECONDS, DEFAULT_TTL_SECONDS } from '@mrtr/ticket';
import { expect } from 'vitest';
import type { RunningCombination } from '../combination.js';
import { type Person, withOfficialClient } from '../official-client.js';

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

/**
 * Our own endpoint speaks 2026-07-28 only: the official client on its
 * 2025-era default cannot even connect (its `initialize` is answered
 * `-32022`, naming 2026-07-28 as the version supported), so `person` is
 * never asked.
 */
export async function refusesLegacyClient(h: RunningCombination, person: Person): Promise<void> {
  const outcome = await withOfficialClient(
    h.urls[0],
    h.principals.alice.token,
    person,
    async () => 'connected',
    'legacy',
  ).then(
    ({ value }) => value,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(Error);
  expect(String(outcome)).toMatch(/"code":-32022/);
  expect(String(outcome)).toContain('2026-07-28');
}
