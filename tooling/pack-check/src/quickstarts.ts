import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { examplesDir, readme, readmeQuickStart } from '../../../examples/test/run.js';
import { type PublishedPackage, ROOT } from './workspace.js';

/** One quick start as a stranger meets it: the code and the steps printed with it. */
export interface QuickStart {
  /** File name in the consumer folder: the README says to save its quick start as `server.ts`. */
  file: string;
  /** Where the code and its steps are printed, for messages. */
  origin: string;
  code: string;
  /** Its `npm …` setup lines, as printed (comments after `#` dropped). */
  steps: string[];
  /** Whether it keeps its data on PostgreSQL (`DATABASE_URL`). */
  postgres: boolean;
}

/** `examples/quickstart-*.ts`, the README's quick starts on PostgreSQL. */
export const QUICK_START_FILES = [
  'quickstart-node.ts',
  'quickstart-express.ts',
  'quickstart-hono.ts',
  'quickstart-sdk.ts',
] as const;

/** An `npm` command of a shell line or `// ` header comment; `#` comments dropped. */
function npmStep(line: string): string | undefined {
  const command = line
    .replace(/^\/\/\s*/, '')
    .replace(/\s#.*$/, '')
    .trim();
  return command.startsWith('npm ') ? command : undefined;
}

/** The `npm …` lines of the ```sh block that ends right before `index` in `text`. */
function stepsOfShellBlockBefore(text: string, index: number): string[] {
  const before = text.slice(0, index);
  const start = before.lastIndexOf('```sh\n');
  const block = start < 0 ? '' : (/^```sh\n([\s\S]*?)```\s*$/.exec(before.slice(start))?.[1] ?? '');
  return block.split('\n').flatMap((l) => npmStep(l) ?? []);
}

/**
 * The README's first-screen quick start (its first ```ts block), with the
 * install line of its first screen (the first ```sh block), and the four
 * files of `examples/` with the `// npm …` lines of their headers.
 */
export function quickStarts(): QuickStart[] {
  const text = readme();
  const firstSh = /```sh\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
  const found: QuickStart[] = [
    {
      file: 'server.ts',
      origin: 'README.md (first screen)',
      code: readmeQuickStart(),
      steps: firstSh.split('\n').flatMap((l) => npmStep(l) ?? []),
      postgres: false,
    },
  ];
  for (const file of QUICK_START_FILES) {
    const code = readFileSync(join(examplesDir, file), 'utf8');
    const header = code.split('\n').filter((l) => l.startsWith('//'));
    found.push({
      file,
      origin: `examples/${file}`,
      code,
      steps: header.flatMap((l) => npmStep(l) ?? []),
      postgres: true,
    });
  }
  return found;
}

/**
 * The steps the README prints in the ```sh block above its copy of `file`
 * (```ts file=examples/<file>), or undefined when it shows no such block.
 */
export function readmeStepsAbove(file: string): string[] | undefined {
  const text = readme();
  const at = text.indexOf(`\`\`\`ts file=examples/${file}\n`);
  return at < 0 ? undefined : stepsOfShellBlockBefore(text, at);
}

/** Package names an `npm install` step names, split by `-D` (devDependencies) or not. */
export function installs(steps: readonly string[]): { runtime: string[]; dev: string[] } {
  const runtime: string[] = [];
  const dev: string[] = [];
  for (const step of steps) {
    const words = step.split(/\s+/);
    if (words[1] !== 'install' && words[1] !== 'i') continue;
    const isDev = words.includes('-D') || words.includes('--save-dev');
    for (const w of words.slice(2)) if (!w.startsWith('-')) (isDev ? dev : runtime).push(w);
  }
  return { runtime, dev };
}

/** The package an install word names: `@types/node@20` → `@types/node`, `pg` → `pg`. */
export function nameOf(word: string): string {
  const at = word.indexOf('@', 1);
  return at === -1 ? word : word.slice(0, at);
}

/** The packages `code` imports (`node:` builtins and relative paths left out). */
export function importedPackages(code: string): string[] {
  const found = new Set<string>();
  for (const m of code.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
    const spec = m[1] as string;
    if (spec.startsWith('.') || spec.startsWith('node:')) continue;
    const parts = spec.split('/');
    found.add(spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string));
  }
  return [...found].sort();
}

/** `@types/…` name of a package: `pg` → `@types/pg`, `@a/b` → `@types/a__b`. */
export function typesPackageOf(name: string): string {
  return `@types/${name.replace(/^@/, '').replace('/', '__')}`;
}

/** Whether the installed package `name` in `dir` ships its own declarations. */
export function shipsTypes(dir: string, name: string): boolean {
  const root = join(dir, 'node_modules', name);
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  if (manifest.types || manifest.typings) return true;
  if (JSON.stringify(manifest.exports ?? {}).includes('"types"')) return true;
  return existsSync(join(root, 'index.d.ts'));
}

/**
 * What the quick start imports that its steps do not install: each package it
 * imports, and for a package without its own declarations, its `@types/…`
 * (found in `dir`, where everything is installed). Empty when complete.
 */
export function missingInstalls(q: QuickStart, dir: string): string[] {
  const words = installs(q.steps);
  const runtime = words.runtime.map(nameOf);
  const dev = words.dev.map(nameOf);
  const missing: string[] = [];
  for (const name of importedPackages(q.code)) {
    if (!runtime.includes(name)) missing.push(`${name} (imported, not installed)`);
    else if (!shipsTypes(dir, name) && ![...runtime, ...dev].includes(typesPackageOf(name)))
      missing.push(`${typesPackageOf(name)} (${name} ships no types)`);
  }
  return missing;
}

/**
 * What the consumer adds to run and check the quick starts beyond their
 * steps: `npx tsx` (which would download tsx), and `tsc` with Node's types.
 */
export const QUICK_START_TOOLING = {
  '@types/node': '^20.19.0',
  tsx: 'latest',
  typescript: '5.9.3',
} as const;

/**
 * A new folder outside the workspace holding the quick starts and a
 * `package.json` with what their `npm install` steps name: each `@mrtr/*` as
 * its tarball from `tarballDir` (every `@mrtr/*` is also an npm override, so
 * their own dependencies get tarballs), every other package at its `latest`,
 * as a stranger's `npm install` picks it. Steps other than `npm install`
 * (`npm pkg set type=module`) are left to run after the install.
 * @returns the folder.
 * @throws {Error} when a step names an `@mrtr/*` package that is not published.
 */
export function prepareQuickStarts(
  packages: readonly PublishedPackage[],
  tarballDir: string,
  all: readonly QuickStart[],
): string {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-quickstarts-'));
  if (dir.startsWith(`${ROOT}/`)) throw new Error(`quick start folder ${dir} is in the workspace`);
  const tarballOf = new Map(packages.map((p) => [p.name, `file:${join(tarballDir, p.tarball)}`]));
  /** `[name, range]` of an install word (`pg`, `@types/node@20`), each `@mrtr/*` as its tarball. */
  const spec = (word: string): [string, string] => {
    const name = nameOf(word);
    if (!name.startsWith('@mrtr/'))
      return [name, name === word ? 'latest' : word.slice(name.length + 1)];
    const tarball = tarballOf.get(name);
    if (!tarball) throw new Error(`an install step names ${name}, which is not published`);
    return [name, tarball];
  };
  const dependencies: Record<string, string> = {};
  const devDependencies: Record<string, string> = { ...QUICK_START_TOOLING };
  for (const q of all) {
    const { runtime, dev } = installs(q.steps);
    for (const [name, range] of runtime.map(spec)) dependencies[name] = range;
    for (const [name, range] of dev.map(spec)) devDependencies[name] = range;
  }
  const overrides = Object.fromEntries(tarballOf);
  const manifest = { name: 'quickstarts', private: true, dependencies, devDependencies, overrides };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const q of all) writeFileSync(join(dir, q.file), q.code);
  const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../consumer');
  copyFileSync(join(fixtures, 'tsconfig.quickstarts.json'), join(dir, 'tsconfig.json'));
  return dir;
}

/** The steps of the quick starts that are not `npm install` (each once, in order). */
export function otherSteps(all: readonly QuickStart[]): string[][] {
  const steps = new Set(all.flatMap((q) => q.steps).filter((s) => !/^npm (install|i) /.test(s)));
  return [...steps].map((s) => s.split(/\s+/));
}
