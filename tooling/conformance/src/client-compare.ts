/**
 * The client leg of the conformance run, as pure functions: which scenarios
 * of the client requirement set run, and how one run is judged.
 */
import {
  type Check,
  covers,
  type NotRun,
  type RequirementSet,
  type ScenarioResult,
} from './compare.js';

/** The scenarios of a client set split into those run and those not run (with the reason), and not-run entries that cover nothing. */
export interface ClientPlan {
  run: string[];
  notRun: { scenario: string; reason: string }[];
  /** Not-run entries that match no scenario of the set: each fails the run. */
  stale: NotRun[];
}

/**
 * Split the scenarios of `set` (scored, then not scored) by `notRun`.
 * @throws Error when a scenario is both not run and expected to fail
 */
export function planClientRun(
  set: RequirementSet,
  notRun: NotRun[],
  expectedFailures: { scenario: string }[] = [],
): ClientPlan {
  const all = [...set.scored, ...set.notScored.map((n) => n.scenario)];
  const plan: ClientPlan = { run: [], notRun: [], stale: [] };
  for (const scenario of all) {
    const entry = notRun.find((e) => covers(e, scenario));
    if (!entry) plan.run.push(scenario);
    else if (expectedFailures.some((f) => f.scenario === scenario))
      throw new Error(`${scenario} is both not run and an expected failure: keep one`);
    else plan.notRun.push({ scenario, reason: entry.reason });
  }
  plan.stale = notRun.filter((e) => !all.some((s) => covers(e, s)));
  return plan;
}

/** How one `conformance client --scenario` run ended, besides its `checks.json`. */
export interface ClientRunOutcome {
  /** The suite's exit code: 0 when it judged the scenario passed. */
  suiteExit: number | null;
  /** The suite's own output, which names a client that exited non-zero or timed out. */
  output: string;
}

/**
 * Judge one client scenario as the suite does for a single scenario: it
 * passes when the suite exits 0, which needs no `FAILURE` and no `WARNING`
 * check, a client that exited 0 (unless the scenario expects an error) and
 * no timeout. The failures name every failing or warning check, and the
 * client's exit or timeout.
 */
export function clientScenarioResult(
  scenario: string,
  checks: Check[] | undefined,
  outcome: ClientRunOutcome,
): ScenarioResult {
  if (checks === undefined)
    return {
      scenario,
      ran: false,
      passed: false,
      failures: [`did not run (suite exit ${outcome.suiteExit})`],
    };
  const failures = checks
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .map(
      (c) =>
        `${c.id}: ${c.status === 'WARNING' ? '(warning) ' : ''}${c.errorMessage ?? c.description ?? 'failed'}`,
    );
  const exited = /Client exited with code (-?\d+)/.exec(outcome.output);
  if (exited) failures.push(`the client exited with code ${exited[1]}`);
  const timedOut = /Client timed out after (\d+)ms/.exec(outcome.output);
  if (timedOut) failures.push(`the client timed out after ${timedOut[1]} ms`);
  const passed = outcome.suiteExit === 0;
  if (!passed && failures.length === 0) failures.push(`the suite exited ${outcome.suiteExit}`);
  return { scenario, ran: true, passed, failures: passed ? [] : failures };
}
