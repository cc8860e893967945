// Are the types wrong? (@arethetypeswrong/core, the engine of the attw CLI) on
// every tarball named in argv, in one process so TypeScript loads once.
// Prints one JSON object: tarball path → { types, problems: [readable lines] }.
// Profile "strict": every resolution mode (node10, node16 from CommonJS and
// from ESM, bundler), no problem kind ignored.
import { readFileSync } from 'node:fs';
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core';
import { problemKindInfo } from '@arethetypeswrong/core/problems';

/** One problem as a line: its title, where, and the rest of what attw found. */
function describe(problem) {
  const { kind, entrypoint, resolutionKind, ...rest } = problem;
  const where = [entrypoint, resolutionKind].filter(Boolean).join(' under ');
  const title = problemKindInfo[kind]?.title ?? kind;
  return `${title} (${kind})${where ? `: ${where}` : ''} ${JSON.stringify(rest)}`;
}

const results = {};
for (const file of process.argv.slice(2)) {
  const pkg = createPackageFromTarballData(new Uint8Array(readFileSync(file)));
  const analysis = await checkPackage(pkg);
  results[file] = analysis.types
    ? { types: true, problems: analysis.problems.map(describe) }
    : { types: false, problems: [] };
}
process.stdout.write(JSON.stringify(results));
