/**
 * Instructions per gated flow, counted by valgrind's callgrind: a figure that
 * does not move with the machine's other load, its CPU frequency or the
 * host's neighbours, so two builds can be compared in one run on a noisy
 * virtual machine where CPU time moves by several per cent from run to run.
 *
 * Each subject (`instructions/loop.ts`: the endpoint with the canned tool,
 * the endpoint with the gated tool, the gate alone) runs twice under
 * callgrind, for a few thousand flows and for three times as many; the
 * difference, divided by the difference in flows, is what one more flow
 * costs once V8 has compiled the code: start-up, module loading and the
 * first compilations cancel out. V8 compiles on the main thread and with a
 * fixed hash and random seed (`--no-concurrent-recompilation
 * --single-threaded-gc --random-seed=1 --hash-seed=1`), so its own work is
 * counted the same way each run; what still varies (fresh random bytes per
 * ticket, timers, when the collector runs) moved a figure by a few hundred
 * instructions on one machine and by up to 25 k on another: compare medians
 * of several runs.
 *
 * Instructions are not time: under valgrind SHA-256 runs its AVX2 code
 * rather than the SHA extensions a real CPU uses, and a cache miss costs
 * nothing. Read the figures to compare builds and to see which native
 * functions a flow spends its instructions in (the table under each
 * subject; code V8 compiled from JavaScript has no symbol and is counted as
 * one row), not as microseconds.
 *
 * Run: `npx -y pnpm@12.4.2 --filter @mrtr/bench instructions` after a build
 * (about two minutes; needs `valgrind` and `callgrind_annotate`). Env:
 * `BENCH_INSTRUCTIONS_FLOWS=3000,9000` (the two counts),
 * `BENCH_INSTRUCTIONS_SUBJECTS=canned,endpoint,gate`, `BENCH_INSTRUCTIONS_TOP=12` (rows per subject).
 * It prints tables and asserts nothing; it exits 1 when valgrind is missing or a run fails.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { compileEntry } from './compile.js';
import { printTable } from './measure.js';

const here = dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);

const SUBJECTS = {
  canned: 'endpoint, canned tool (no gate)',
  endpoint: 'endpoint + gate (the benchmark tool)',
  gate: 'gate alone (ConfirmationGate.run, both rounds)',
} as const;
type Subject = keyof typeof SUBJECTS;

const counts = (process.env.BENCH_INSTRUCTIONS_FLOWS ?? '3000,9000').split(',').map(Number);
const low = counts[0] ?? Number.NaN;
const high = counts[1] ?? Number.NaN;
const subjects = (process.env.BENCH_INSTRUCTIONS_SUBJECTS ?? 'canned,endpoint,gate')
  .split(',')
  .filter(Boolean) as Subject[];
const top = Number(process.env.BENCH_INSTRUCTIONS_TOP ?? 12);
if (!Number.isSafeInteger(low) || !Number.isSafeInteger(high) || !(high > low))
  throw new Error('BENCH_INSTRUCTIONS_FLOWS must be two increasing integers, e.g. 3000,9000');
for (const s of subjects)
  if (!Object.hasOwn(SUBJECTS, s))
    throw new Error(`unknown subject ${s}: ${Object.keys(SUBJECTS).join(', ')}`);

for (const tool of ['valgrind', 'callgrind_annotate']) {
  // callgrind_annotate --version prints its version and exits 255: only a missing program counts.
  const probe = spawnSync(tool, ['--version'], { encoding: 'utf8' });
  if (probe.error) {
    console.error(
      `${tool} is not installed: this benchmark counts instructions with valgrind's callgrind.`,
    );
    process.exit(1);
  }
}

const loop = await compileEntry(join('instructions', 'loop.ts'), 'instructions-loop');

const work = mkdtempSync(join(tmpdir(), 'mrtr-callgrind-'));

/** Instructions of the whole process, and the callgrind_annotate listing by function. */
async function count(
  subject: Subject,
  flows: number,
): Promise<{ total: number; byFunction: Map<string, number> }> {
  const out = join(work, `${subject}.${flows}.out`);
  const { stderr } = await run(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${out}`,
      process.execPath,
      '--no-concurrent-recompilation',
      '--single-threaded-gc',
      '--random-seed=1',
      '--hash-seed=1',
      loop,
      subject,
      String(flows),
    ],
    { cwd: join(here, '..'), maxBuffer: 64 * 2 ** 20 },
  );
  const collected = /Collected : (\d+)/.exec(stderr);
  if (!collected)
    throw new Error(`callgrind printed no total for ${subject} × ${flows}:\n${stderr}`);
  const { stdout } = await run('callgrind_annotate', ['--threshold=100', out], {
    maxBuffer: 256 * 2 ** 20,
  });
  return { total: Number(collected[1]), byFunction: byFunction(stdout) };
}

/**
 * Instructions by function from a callgrind_annotate listing. Code V8
 * compiled at run time has no symbol: all of it is one row.
 */
function byFunction(listing: string): Map<string, number> {
  const rows = new Map<string, number>();
  for (const line of listing.split('\n')) {
    const m = /^\s*([\d,]+) \([ \d.]+%\)\s+(.+)$/.exec(line);
    if (!m || (m[2] as string).includes('PROGRAM TOTALS')) continue;
    const where = (m[2] as string).replace(/\s*\[[^\]]*\]\s*$/, '');
    const name = /^\?\?\?:0x[0-9a-f]+/.test(where)
      ? '(JavaScript compiled by V8)'
      : where.replace(/^\?\?\?:/, '').replace(/^.*\/([^/]+):/, '$1:');
    rows.set(name, (rows.get(name) ?? 0) + Number((m[1] as string).replace(/,/g, '')));
  }
  return rows;
}

// Two runs at a time: callgrind counts do not depend on how busy the machine is.
async function measure(subject: Subject) {
  const [a, b] = await Promise.all([count(subject, low), count(subject, high)]);
  const flows = high - low;
  const perFunction = [...new Set([...a.byFunction.keys(), ...b.byFunction.keys()])]
    .map(
      (name) =>
        [name, ((b.byFunction.get(name) ?? 0) - (a.byFunction.get(name) ?? 0)) / flows] as const,
    )
    .sort((x, y) => y[1] - x[1]);
  return { perFlow: (b.total - a.total) / flows, perFunction };
}

const results = new Map<Subject, Awaited<ReturnType<typeof measure>>>();
try {
  for (const subject of subjects) results.set(subject, await measure(subject));
} finally {
  rmSync(work, { recursive: true, force: true });
}

const k = (n: number) => `${(n / 1000).toFixed(1)} k`;
console.log(
  `Node ${process.version}; instructions per flow (round 1 + round 2) in process, counted by callgrind: ` +
    `(instructions at ${high} flows − at ${low}) / ${high - low}.\n`,
);
printTable(
  ['what runs', 'instructions per flow'],
  subjects.map((s) => [SUBJECTS[s], k(results.get(s)?.perFlow ?? 0)]),
);
const canned = results.get('canned');
const endpoint = results.get('endpoint');
const gate = results.get('gate');
if (canned && endpoint && gate)
  console.log(
    `\nBy layer: the endpoint ${k(canned.perFlow)}, the gate ${k(gate.perFlow)}, ` +
      `the tool and the rest the gate adds to the endpoint ${k(endpoint.perFlow - canned.perFlow - gate.perFlow)}.`,
  );
for (const subject of subjects) {
  const r = results.get(subject);
  if (!r) continue;
  console.log(`\n${SUBJECTS[subject]}: where one flow's instructions go (top ${top}).\n`);
  printTable(
    ['function', 'instructions per flow', 'share'],
    r.perFunction
      .slice(0, top)
      .map(([name, n]) => [name.slice(0, 100), k(n), `${((100 * n) / r.perFlow).toFixed(1)} %`]),
  );
}
