/**
 * Run the official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * pinned) against apps/conformance-server, under the Node 22 binary of the
 * pinned `node` package, and judge the outcome against expected-failures.yaml.
 *
 * Usage: `tsx src/run.ts [--scenario NAME]` (root script: `pnpm conformance`).
 * Exits 0 when every scenario of the 2026-07-28 server set passes or fails as
 * expected (with a reason), 1 on any unexpected failure or stale entry, 2 when
 * the run itself could not be made. Needs apps/conformance-server built.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  type Check,
  judge,
  parseExpectedFailures,
  type ScenarioResult,
  scenarioOfFolder,
  scenarioResult,
  serverRequirements,
} from './compare.js';
import { fail, node22Version, requirementsYaml, runSuite, suiteVersion } from './suite.js';

const REVISION = '2026-07-28';
const HERE = dirname(new URL(import.meta.url).pathname);
const ROOT = join(HERE, '..');
const require = createRequire(import.meta.url);

const serverMain = join(
  dirname(require.resolve('@mrtr/conformance-server/package.json')),
  'dist',
  'main.js',
);

/** Start the conformance server on a free port; resolve with its URL once it says it listens. */
function startServer(): Promise<{ child: ChildProcess; url: string }> {
  if (!existsSync(serverMain))
    fail(`${serverMain} is missing: build @mrtr/conformance-server first`);
  const child = spawn(process.execPath, [serverMain, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error('conformance server did not start in 15 s')),
      15_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] as string });
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`conformance server exited (${code}) before listening`)),
    );
  });
}

function readResults(dir: string): Map<string, Check[]> {
  const found = new Map<string, Check[]>();
  for (const folder of readdirSync(dir)) {
    const scenario = scenarioOfFolder(folder);
    const file = join(dir, folder, 'checks.json');
    if (scenario && existsSync(file))
      found.set(scenario, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
  }
  return found;
}

async function main() {
  const only = process.argv.includes('--scenario')
    ? process.argv[process.argv.indexOf('--scenario') + 1]
    : undefined;
  const set = serverRequirements(REVISION, requirementsYaml(REVISION));
  const expected = parseExpectedFailures(
    readFileSync(join(ROOT, 'expected-failures.yaml'), 'utf8'),
  );
  const version = await node22Version();

  const { child, url } = await startServer().catch((e: Error) => fail(e.message));
  const outDir = mkdtempSync(join(tmpdir(), 'mrtr-conformance-'));
  const log: string[] = [];
  console.log(
    `conformance ${suiteVersion} on node ${version}: server scenarios of ${REVISION} against ${url}`,
  );
  const args = only
    ? ['server', '--url', url, '--scenario', only, '--spec-version', REVISION, '-o', outDir]
    : ['server', '--url', url, '--requirements', REVISION, '-o', outDir];
  const started = Date.now();
  const code = await runSuite(args, log);
  child.kill('SIGTERM');
  // One file per run: two runs on one machine must not overwrite each other's log.
  const logFile = join(mkdtempSync(join(tmpdir(), 'mrtr-conformance-')), 'output.log');
  writeFileSync(logFile, log.join(''));

  const checks = readResults(outDir);
  rmSync(outDir, { recursive: true, force: true });
  if (checks.size === 0) {
    console.error(log.join('').slice(-4000));
    fail(`the suite wrote no results (exit ${code})`);
  }
  const results: ScenarioResult[] = [...set.scored, ...set.notScored.map((n) => n.scenario)].map(
    (s) => scenarioResult(s, checks.get(s)),
  );
  if (only) {
    const r = scenarioResult(only, checks.get(only));
    console.log(
      `${r.passed ? 'PASS' : 'FAIL'} ${only}${r.failures.map((f) => `\n  ✗ ${f}`).join('')}`,
    );
    process.exit(r.passed ? 0 : 1);
  }
  const verdict = judge(set, results, expected);
  for (const r of results) {
    const mark = r.passed
      ? '✓'
      : verdict.expected.some((e) => e.scenario === r.scenario)
        ? '~'
        : '✗';
    console.log(`${mark} ${r.scenario}`);
  }
  for (const e of verdict.expected)
    console.log(`\nexpected failure ${e.scenario}: ${e.reason}\n  ${e.failures.join('\n  ')}`);
  for (const u of verdict.unexpected)
    console.log(`\nUNEXPECTED failure ${u.scenario}:\n  ${u.failures.join('\n  ')}`);
  for (const s of verdict.stale)
    console.log(
      `\nSTALE expected-failures entry ${s.scenario}: it passes (or is not run); remove it`,
    );
  console.log(
    `\nscored (${REVISION} server requirements): ${verdict.scored.passed}/${verdict.scored.total} passed` +
      `; not scored: ${verdict.notScored.passed}/${verdict.notScored.total} passed` +
      `; expected failures: ${verdict.expected.length}; unexpected: ${verdict.unexpected.length}; stale: ${verdict.stale.length}` +
      ` (${((Date.now() - started) / 1000).toFixed(1)} s; full log: ${logFile})`,
  );
  // A plain closing line for CI logs: passing scenarios, and failures that fail the run.
  const passed = verdict.scored.passed + verdict.notScored.passed;
  console.log(
    `conformance: ${passed} passed, ${verdict.unexpected.length + verdict.stale.length} failed`,
  );
  process.exit(verdict.ok ? 0 : 1);
}

main().catch((error) =>
  fail(error instanceof Error ? (error.stack ?? error.message) : String(error)),
);
