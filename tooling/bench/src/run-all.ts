/**
 * Every benchmark of the project, one after the other, each in its own process so
 * that none inherits another's heap or JIT state: ticket mint + open, RFC 8785
 * digest, the two-round gated `tools/call` over HTTP with peak RSS, the
 * in-process split of that flow's server CPU, and the replay stores. Each prints its own table; this prints a heading before each
 * and a closing line naming any that failed (exit code 1 then).
 *
 * Run: `npx -y pnpm@12.4.2 bench` from the repository root (builds first).
 */
import { spawn } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

const benches: [file: string, title: string][] = [
  ['ticket.ts', '1. Ticket mint + open: @mrtr/ticket vs the SDK requestState codec'],
  ['digest.ts', '2. RFC 8785 canonical digest: @mrtr/digest vs canonicalize'],
  ['flow.ts', '3–4. Two-round gated tools/call over HTTP, and peak RSS of each server'],
  ['endpoint.ts', '3b. Where the server CPU of one flow goes (in process, no sockets)'],
  ['stores.ts', '5. Replay claims per second vs the raw two-write sequence of each store'],
];

/** Run one script under tsx with this process's stdio. @returns its exit code. */
function run(file: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, file)], {
      cwd: join(here, '..'),
      stdio: 'inherit',
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

// Hosts of the same size differ by 2–3× in what our JavaScript costs (docs/benchmarks.md, "Machine
// and run"): the CPU model says which kind of host a set of tables comes from.
const cores = cpus();
console.log(
  `${new Date().toISOString()}: Node ${process.version}, ${cores.length} CPUs (${cores[0]?.model.trim() ?? 'model unknown'}), ` +
    `${Math.round(totalmem() / 2 ** 20)} MB memory.`,
);

const failed: string[] = [];
for (const [file, title] of benches) {
  console.log(`\n## ${title}\n`);
  const code = await run(file);
  if (code !== 0) failed.push(`${file} (exit ${code})`);
}
console.log(
  failed.length === 0
    ? '\nAll benchmarks ran.'
    : `\nFailed: ${failed.join(', ')}; the tables above are incomplete.`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
