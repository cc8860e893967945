/**
 * Type-check the documentation's code examples as a consumer would write
 * them: every example becomes a module of a temporary project whose
 * `node_modules` is this package's (every workspace package and the
 * third-party libraries the examples import), compiled with the workspace's
 * compiler settings (`tooling/tsconfig/base.json`) and nothing emitted.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import type { Example } from './extract.js';

/** One problem with an example, located in the documentation. */
export interface ExampleProblem {
  /** `origin:line`, the line of the documentation the problem is on. */
  where: string;
  message: string;
}

/** What {@link checkExamples} needs besides the examples. */
export interface CheckOptions {
  /** The repository root: origins are relative to it. */
  root: string;
  /** The `node_modules` the examples resolve their imports from. */
  nodeModules: string;
  /** The tsconfig the examples are compiled with (`extends`). */
  tsconfig: string;
}

/**
 * Examples marked `file=<path>` that differ from the file they mirror
 * (resolved from the directory of their origin).
 */
export function mirrorProblems(root: string, examples: Example[]): ExampleProblem[] {
  const problems: ExampleProblem[] = [];
  for (const e of examples) {
    if (e.mirrors === undefined) continue;
    const file = resolve(root, dirname(e.origin), e.mirrors);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      problems.push({
        where: `${e.origin}:${e.line}`,
        message: `mirrors ${e.mirrors}, which cannot be read`,
      });
      continue;
    }
    if (text !== e.code) {
      const a = text.split('\n');
      const b = e.code.split('\n');
      let n = 0;
      while (n < a.length && a[n] === b[n]) n++;
      problems.push({
        where: `${e.origin}:${e.line + n}`,
        message: `differs from ${e.mirrors} (line ${n + 1} there: ${JSON.stringify(a[n] ?? '<end of file>')})`,
      });
    }
  }
  return problems;
}

/**
 * Compile every example that is not a `fragment`, each as its own module.
 * @returns the compiler's errors, each located at the documentation line it
 *   is about; empty when every example compiles.
 */
export function compileProblems(examples: Example[], options: CheckOptions): ExampleProblem[] {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-doc-examples-'));
  try {
    symlinkSync(options.nodeModules, join(dir, 'node_modules'), 'dir');
    writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
    const sources = new Map<string, Example>();
    examples
      .filter((e) => !e.fragment)
      .forEach((e, i) => {
        const name = `${String(i).padStart(3, '0')}-${e.origin.replace(/[^A-Za-z0-9]+/g, '-')}-${e.line}.ts`;
        const file = join(dir, 'examples', name);
        mkdirSync(dirname(file), { recursive: true });
        // `export {}` makes each example a module of its own: its names never meet another's.
        writeFileSync(file, `${e.code}export {};\n`);
        sources.set(resolve(file), e);
      });
    const config = ts.parseJsonConfigFileContent(
      { extends: options.tsconfig, compilerOptions: { noEmit: true }, files: [...sources.keys()] },
      ts.sys,
      dir,
    );
    const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      const example = d.file ? sources.get(resolve(d.file.fileName)) : undefined;
      if (!(d.file && example))
        return { where: d.file ? relative(dir, d.file.fileName) : '(project)', message };
      const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
      return {
        where: `${example.origin}:${example.line + line}`,
        message: `TS${d.code}: ${message}`,
      };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
