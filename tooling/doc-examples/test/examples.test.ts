/**
 * The documentation's code examples compile: every ```ts block of the
 * READMEs and every `@example` of the packages' and apps' sources, each as a
 * module of its own, against the built workspace packages. A block marked
 * `file=<path>` equals that file.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileProblems, mirrorProblems } from '../src/check.js';
import { collectExamples, importedPackages, markdownFiles, sourceFiles } from '../src/sources.js';

const root = resolve(import.meta.dirname, '../../..');
const here = resolve(import.meta.dirname, '..');
const options = {
  root,
  nodeModules: join(here, 'node_modules'),
  tsconfig: join(root, 'tooling/tsconfig/base.json'),
};
const examples = collectExamples(root);
const show = (problems: { where: string; message: string }[]) =>
  problems.map((p) => `${p.where}: ${p.message}`);

describe('the examples of the documentation', () => {
  it('are found in the READMEs and in the doc comments of every package', () => {
    const origins = new Set(examples.map((e) => e.origin));
    for (const name of ['gate', 'server', 'wire', 'replay', 'ticket', 'sql'])
      expect(origins, name).toContain(`packages/${name}/README.md`);
    expect(examples.filter((e) => e.origin.endsWith('.ts')).length).toBeGreaterThan(20);
    expect(markdownFiles(root)).toContain('README.md');
    expect(sourceFiles(root)).toContain('packages/gate/src/index.ts');
  });

  it('are rarely fragments', () => {
    // A fragment that mirrors a file (`file=`) is checked as that file, where it compiles.
    const fragments = examples
      .filter((e) => e.fragment && !e.mirrors)
      .map((e) => `${e.origin}:${e.line}`);
    expect(fragments.length, fragments.join(', ')).toBeLessThanOrEqual(3);
  });

  it('import only packages this checker depends on', () => {
    const manifest = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
    const known = new Set(Object.keys(manifest.devDependencies));
    const missing = examples.flatMap((e) =>
      importedPackages(e.code)
        .filter((p) => !known.has(p))
        .map(
          (p) => `${e.origin}:${e.line} imports ${p}: add it to tooling/doc-examples/package.json`,
        ),
    );
    expect(missing).toEqual([]);
  });

  it('mirror the files they say they show, byte for byte', () => {
    expect(show(mirrorProblems(root, examples))).toEqual([]);
  });

  it("include the gate README's smallest server, as examples/smallest-server.ts is", () => {
    const mirror = examples.find(
      (e) => e.origin === 'packages/gate/README.md' && e.mirrors === 'examples/smallest-server.ts',
    );
    expect(mirror?.code).toBe(
      readFileSync(join(root, 'packages/gate/examples/smallest-server.ts'), 'utf8'),
    );
  });

  it('compile', () => {
    expect(show(compileProblems(examples, options))).toEqual([]);
  });
});
