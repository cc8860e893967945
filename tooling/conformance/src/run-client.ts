/**
 * Run the official MCP conformance suite in client mode against `@mrtr/client`
 * (through `src/client-entry.ts`), under the Node 22 of the pinned `node`
 * package, and judge the outcome against the `client:` and `client-not-run:`
 * lists of expected-failures.yaml.
 *
 * Usage: `tsx src/run-client.ts [--scenario NAME]` (root script: `pnpm conformance`).
 * Every scenario of the 2026-07-28 client set (scored and not scored) runs,
 * one `conformance client --scenario` at a time, unless `client-not-run`
 * covers it. Exits 0 when each passes or fails as expected (with a reason),
 * 1 on an unexpected failure or a stale entry, 2 when the run itself could
 * not be made. Needs @mrtr/client built.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { clientScenarioResult, planClientRun } from './client-compare.js';
import {
  type Check,
  judge,
  parseExpectedFailures,
  parseNotRun,
  requirements,
  type ScenarioResult,
} from './compare.js';
import { fail, node22Version, requirementsYaml, runSuite, suiteVersion } from './suite.js';

const REVISION = '2026-07-28';
const ROOT = join(dirname(new URL(import.meta.url).pathname), '..');
const require = createRequire(import.meta.url);
const ENTRY = join(ROOT, 'src', 'client-entry.ts');
const clientDist = join(dirname(require.resolve('@mrtr/client/package.json')), 'dist', 'index.js');

/** The command the suite runs: our Node (the client's own runtime), tsx, the entry. */
function clientCommand(): string {
  const parts = [process.execPath, require.resolve('tsx/cli'), ENTRY];
  // The suite splits --command on spaces, so no part may hold one.
  const spaced = parts.find((p) => /\s/.test(p));
  if (spaced) fail(`the client command cannot hold a path with spaces: ${spaced}`);
  return parts.join(' ');
}

/** `checks.json` of the one result folder a `--scenario` run wrote under `dir` (auth/… names nest). */
function findChecks(dir: string): Check[] | undefined {
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (entry.endsWith('checks.json'))
      return JSON.parse(readFileSync(join(dir, entry), 'utf8')) as Check[];
  }
  return undefined;
}

async function runOne(scenario: string, command: string, log: string[]): Promise<ScenarioResult> {
  const out = mkdtempSync(join(tmpdir(), 'mrtr-conformance-client-'));
  const own: string[] = [];
  const args = ['client', '--command', command, '--scenario', scenario];
  const suiteExit = await runSuite([...args, '--spec-version', REVISION, '-o', out], own);
  log.push(`\n===== ${scenario} (suite exit ${suiteExit}) =====\n`, ...own);
  const checks = findChecks(out);
  rmSync(out, { recursive: true, force: true });
  return clientScenarioResult(scenario, checks, { suiteExit, output: own.join('') });
}

async function main() {
  const only = process.argv.includes('--scenario')
    ? process.argv[process.argv.indexOf('--scenario') + 1]
    : undefined;
  if (!existsSync(clientDist)) fail(`${clientDist} is missing: build @mrtr/client first`);
  const listed = readFileSync(join(ROOT, 'expected-failures.yaml'), 'utf8');
  const expected = parseExpectedFailures(listed, 'client');
  const set = requirements(REVISION, requirementsYaml(REVISION), 'client');
  const plan = planClientRun(set, parseNotRun(listed), expected);
  const version = await node22Version();
  const command = clientCommand();
  console.log(
    `conformance ${suiteVersion} on node ${version}: client scenarios of ${REVISION} against @mrtr/client (${process.version})`,
  );

  const log: string[] = [];
  const started = Date.now();
  const results: ScenarioResult[] = [];
  for (const scenario of only ? [only] : plan.run) {
    const r = await runOne(scenario, command, log);
    results.push(r);
    if (!only)
      console.log(
        `${r.passed ? '✓' : expected.some((e) => e.scenario === scenario) ? '~' : '✗'} ${scenario}`,
      );
  }
  const logFile = join(mkdtempSync(join(tmpdir(), 'mrtr-conformance-client-')), 'output.log');
  writeFileSync(logFile, log.join(''));
  if (only) {
    const r = results[0] as ScenarioResult;
    console.log(
      `${r.passed ? 'PASS' : 'FAIL'} ${only}${r.failures.map((f) => `\n  ✗ ${f}`).join('')}`,
    );
    console.log(`(full log: ${logFile})`);
    process.exit(r.passed ? 0 : 1);
  }

  // Judge only what ran: the not-run scenarios are reported with their reason, never scored here.
  const ran = (names: string[]) => names.filter((s) => plan.run.includes(s));
  const runSet = {
    revision: REVISION,
    scored: ran(set.scored),
    notScored: set.notScored.filter((n) => plan.run.includes(n.scenario)),
  };
  const verdict = judge(runSet, results, expected);
  for (const e of verdict.expected)
    console.log(`\nexpected failure ${e.scenario}: ${e.reason}\n  ${e.failures.join('\n  ')}`);
  for (const u of verdict.unexpected)
    console.log(`\nUNEXPECTED failure ${u.scenario}:\n  ${u.failures.join('\n  ')}`);
  for (const s of verdict.stale)
    console.log(
      `\nSTALE expected-failures entry ${s.scenario}: it passes (or is not run); remove it`,
    );
  for (const s of plan.stale)
    console.log(
      `\nSTALE client-not-run entry ${s.scenario ?? `${s.prefix}*`}: no scenario of the set matches it`,
    );
  const reasons = [...new Set(plan.notRun.map((n) => n.reason))];
  for (const reason of reasons) {
    const names = plan.notRun.filter((n) => n.reason === reason).map((n) => n.scenario);
    console.log(`\nnot run (${names.length}): ${reason}\n  ${names.join(', ')}`);
  }
  console.log(
    `\nclient (${REVISION} client requirements): scored ${verdict.scored.passed}/${verdict.scored.total} passed` +
      `; not scored: ${verdict.notScored.passed}/${verdict.notScored.total} passed; not run: ${plan.notRun.length}` +
      `; expected failures: ${verdict.expected.length}; unexpected: ${verdict.unexpected.length}; stale: ${verdict.stale.length + plan.stale.length}` +
      ` (${((Date.now() - started) / 1000).toFixed(1)} s; full log: ${logFile})`,
  );
  const passed = verdict.scored.passed + verdict.notScored.passed;
  const failed = verdict.unexpected.length + verdict.stale.length + plan.stale.length;
  console.log(`conformance client: ${passed} passed, ${failed} failed`);
  process.exit(verdict.ok && plan.stale.length === 0 ? 0 : 1);
}

main().catch((error) =>
  fail(error instanceof Error ? (error.stack ?? error.message) : String(error)),
);
