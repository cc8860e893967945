import type { RunningCombination } from '../combination.js';

/** The columns of the matrix, in order: one scenario each, the same for every app. */
export const COLUMNS = [
  { id: 'happy', code: 'ok', title: 'happy path' },
  { id: 'decline', code: 'dec', title: 'decline' },
  { id: 'cancel', code: 'can', title: 'cancel then accept' },
  { id: 'missing', code: 'mis', title: 'missing answer asked again' },
  { id: 'tampered', code: 'tam', title: 'tampered ticket' },
  { id: 'arguments', code: 'arg', title: 'changed arguments' },
  { id: 'principal', code: 'who', title: 'other principal' },
  { id: 'expired', code: 'exp', title: 'expired ticket' },
  { id: 'outside', code: 'set', title: 'chosen value outside the signed set' },
  { id: 'mismatch', code: 'nam', title: 'typed name mismatch asked again' },
  { id: 'reissue', code: 'rei', title: 're-issue after completion' },
  { id: 'concurrent', code: 'x20', title: '20 concurrent presentations on two instances' },
  { id: 'capabilities', code: 'cap', title: 'capabilities without form elicitation' },
  { id: 'official', code: 'sdk', title: 'happy path with @modelcontextprotocol/client' },
  {
    id: 'legacy',
    code: '2025',
    title:
      '@modelcontextprotocol/client on 2025-11-25 (its default): confirmed on the SDK bridge, refused by our 2026-07-28 endpoint',
  },
  {
    id: 'rebinding',
    code: 'dns',
    title: 'a foreign Host or Origin (DNS rebinding) refused with 403, nothing asked',
  },
] as const;

export type ScenarioId = (typeof COLUMNS)[number]['id'];

/**
 * One scenario of an app: `run` drives a running combination over HTTP and
 * asserts both what was answered and what is left in the database; or `na`
 * says why the scenario does not apply to this app.
 */
export type Scenario =
  | { id: ScenarioId; run: (h: RunningCombination) => Promise<void>; na?: undefined }
  | { id: ScenarioId; na: string; run?: undefined };
