import { parse } from 'yaml';

/**
 * Compare one run of the official conformance suite with the expected
 * failures we keep. Pure functions: the runner feeds them files and output.
 */

/** One check of a scenario, as the suite writes it in `checks.json`. */
export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO' | string;
  description?: string;
  errorMessage?: string;
}

/** A scenario's outcome: passed when it ran and no check is a `FAILURE` (warnings pass, as in the suite). */
export interface ScenarioResult {
  scenario: string;
  ran: boolean;
  passed: boolean;
  /** `FAILURE` checks as `id: message`; `did not run` when no results were written. */
  failures: string[];
}

/** Reduce a scenario's checks (or their absence) to a {@link ScenarioResult}. */
export function scenarioResult(scenario: string, checks: Check[] | undefined): ScenarioResult {
  if (checks === undefined)
    return { scenario, ran: false, passed: false, failures: ['did not run'] };
  const failures = checks
    .filter((c) => c.status === 'FAILURE')
    .map((c) => `${c.id}: ${c.errorMessage ?? 'failed'}`);
  return { scenario, ran: true, passed: failures.length === 0, failures };
}

/** The scenarios a requirement set runs: the scored list, and the not-scored ones with their reasons. */
export interface RequirementSet {
  revision: string;
  scored: string[];
  notScored: { scenario: string; reason: string }[];
}

/** Read the server leg of a requirements YAML shipped in the suite (`requirements/<revision>.yaml`). */
export function serverRequirements(revision: string, yamlText: string): RequirementSet {
  return requirements(revision, yamlText, 'server');
}

/**
 * Read one leg (`server` or `client`) of a requirements YAML shipped in the
 * suite: its scored list, and the not-scored entries of that leg.
 * @throws Error when the YAML has no list for that leg
 */
export function requirements(
  revision: string,
  yamlText: string,
  leg: 'server' | 'client',
): RequirementSet {
  const doc = parse(yamlText) as Record<string, unknown> & {
    not_scored?: { scenario: string; leg: string; reason: string }[];
  };
  const scored = doc?.[leg];
  if (!Array.isArray(scored)) throw new Error(`requirements ${revision} have no ${leg} list`);
  return {
    revision,
    scored: scored as string[],
    notScored: (doc.not_scored ?? [])
      .filter((e) => e.leg === leg)
      .map((e) => ({ scenario: e.scenario, reason: e.reason })),
  };
}

/** One entry of `expected-failures.yaml`. */
export interface ExpectedFailure {
  scenario: string;
  reason: string;
}

/**
 * Parse one list of `expected-failures.yaml`: `server:` (the default) or
 * `client:`, each a list of `{scenario, reason}`.
 * @throws Error on an entry without a scenario or a non-empty reason, or a scenario listed twice.
 */
export function parseExpectedFailures(
  yamlText: string,
  leg: 'server' | 'client' = 'server',
): ExpectedFailure[] {
  const doc = (parse(yamlText) ?? {}) as Record<string, unknown>;
  return reasonedList(doc[leg] ?? [], `expected-failures.yaml: ${leg}`).map((e) => {
    if (e.scenario === undefined)
      throw new Error(`expected-failures.yaml: ${leg} entry has no scenario`);
    return { scenario: e.scenario, reason: e.reason };
  });
}

/** A `{scenario | prefix, reason}` list with the checks every such list needs. */
function reasonedList(
  list: unknown,
  where: string,
): { scenario?: string; prefix?: string; reason: string }[] {
  if (!Array.isArray(list)) throw new Error(`${where} must be a list`);
  const seen = new Set<string>();
  return list.map((entry, i) => {
    const e = (entry ?? {}) as { scenario?: unknown; prefix?: unknown; reason?: unknown };
    const name = typeof e.scenario === 'string' && e.scenario !== '' ? e.scenario : undefined;
    const prefix = typeof e.prefix === 'string' && e.prefix !== '' ? e.prefix : undefined;
    if (!name && !prefix) throw new Error(`${where}: entry ${i + 1} has no scenario`);
    const label = name ?? `${prefix}*`;
    if (typeof e.reason !== 'string' || e.reason.trim().length < 10)
      throw new Error(`${where}: ${label} needs a reason (a sentence, not a word)`);
    if (seen.has(label)) throw new Error(`${where}: ${label} is listed twice`);
    seen.add(label);
    return { ...(name ? { scenario: name } : { prefix }), reason: e.reason.trim() };
  });
}

/** One entry of `client-not-run:`: a scenario, or every scenario whose name starts with `prefix`. */
export interface NotRun {
  scenario?: string;
  prefix?: string;
  reason: string;
}

/**
 * Parse `client-not-run:` of `expected-failures.yaml`: scenarios of the
 * client set this client does not serve at all (each `{scenario | prefix, reason}`).
 * @throws Error on an entry without a scenario or prefix, or without a reason
 */
export function parseNotRun(yamlText: string): NotRun[] {
  const doc = (parse(yamlText) ?? {}) as Record<string, unknown>;
  return reasonedList(doc['client-not-run'] ?? [], 'expected-failures.yaml: client-not-run');
}

/** Whether a not-run entry covers `scenario`. */
export function covers(entry: NotRun, scenario: string): boolean {
  return entry.scenario !== undefined
    ? entry.scenario === scenario
    : scenario.startsWith(entry.prefix as string);
}

/** The verdict of a run against the expected failures. */
export interface Verdict {
  /** Scored scenarios passing, of all scored. */
  scored: { passed: number; total: number };
  /** Not-scored scenarios passing, of all not-scored. */
  notScored: { passed: number; total: number };
  /** Failing and not expected to: each fails the run. */
  unexpected: ScenarioResult[];
  /** Failing as expected. */
  expected: (ScenarioResult & { reason: string })[];
  /** Expected to fail but passing, or naming a scenario this set does not run: each fails the run. */
  stale: ExpectedFailure[];
  ok: boolean;
}

/** Judge `results` (one per scenario of `set`) against `expectedFailures`. */
export function judge(
  set: RequirementSet,
  results: ScenarioResult[],
  expectedFailures: ExpectedFailure[],
): Verdict {
  const byName = new Map(results.map((r) => [r.scenario, r]));
  const expectedBy = new Map(expectedFailures.map((e) => [e.scenario, e]));
  const all = [...set.scored, ...set.notScored.map((n) => n.scenario)];
  const resultOf = (s: string) => byName.get(s) ?? scenarioResult(s, undefined);
  const unexpected: ScenarioResult[] = [];
  const expected: Verdict['expected'] = [];
  for (const scenario of all) {
    const r = resultOf(scenario);
    if (r.passed) continue;
    const e = expectedBy.get(scenario);
    if (e) expected.push({ ...r, reason: e.reason });
    else unexpected.push(r);
  }
  const stale = expectedFailures.filter(
    (e) => !all.includes(e.scenario) || resultOf(e.scenario).passed,
  );
  const count = (names: string[]) => ({
    passed: names.filter((s) => resultOf(s).passed).length,
    total: names.length,
  });
  return {
    scored: count(set.scored),
    notScored: count(set.notScored.map((n) => n.scenario)),
    unexpected,
    expected,
    stale,
    ok: unexpected.length === 0 && stale.length === 0,
  };
}

const STAMP = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

/**
 * The scenario a result folder belongs to: the suite names them
 * `server-<scenario>-<ISO time with : and . as ->`.
 * @returns the scenario, or `undefined` for any other folder
 */
export function scenarioOfFolder(folder: string): string | undefined {
  if (!folder.startsWith('server-') || !STAMP.test(folder)) return undefined;
  return folder.slice('server-'.length).replace(STAMP, '');
}
