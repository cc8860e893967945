/**
 * The checker itself: it finds what it should, skips what is marked, and
 * fails, at the right line, on an example that does not compile or a mirror
 * that drifted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileProblems, mirrorProblems } from '../src/check.js';
import { docCommentExamples, markdownExamples } from '../src/extract.js';
import { importedPackages } from '../src/sources.js';

const here = resolve(import.meta.dirname, '..');
const options = {
  root: here,
  nodeModules: join(here, 'node_modules'),
  tsconfig: resolve(here, '../tsconfig/base.json'),
};
const dir = mkdtempSync(join(tmpdir(), 'mrtr-doc-examples-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const README = [
  '# x', // 1
  '', // 2
  '```ts', // 3
  "import { digestJson } from '@mrtr/digest';", // 4
  'const d: string = digestJson({ a: 1 });', // 5
  '```', // 6
  '', // 7
  '```ts fragment', // 8
  'notDefinedAnywhere();', // 9
  '```', // 10
  '', // 11
  '- a list item:', // 12
  '  ```ts', // 13
  '  const n: number = 1;', // 14
  '  ```', // 15
  '', // 16
  '```sh', // 17
  'echo not typescript', // 18
  '```', // 19
].join('\n');

describe('markdownExamples', () => {
  it('finds ts blocks, marks fragments, removes a list item indent, skips other languages', () => {
    const found = markdownExamples('README.md', README);
    expect(found.map((e) => [e.line, e.fragment, e.code])).toEqual([
      [
        4,
        false,
        "import { digestJson } from '@mrtr/digest';\nconst d: string = digestJson({ a: 1 });\n",
      ],
      [9, true, 'notDefinedAnywhere();\n'],
      [14, false, 'const n: number = 1;\n'],
    ]);
  });

  it('refuses a block that is never closed', () => {
    expect(() => markdownExamples('README.md', '```ts\nconst a = 1;\n')).toThrow(/README.md:1/);
  });
});

describe('docCommentExamples', () => {
  it('takes the ts block of an @example tag, without the comment margin', () => {
    const source = [
      '/**', // 1
      ' * Adds.', // 2
      ' *', // 3
      ' * @example', // 4
      ' * ```ts', // 5
      ' * const x = 1 * 2;', // 6
      ' *   // indented', // 7
      ' * ```', // 8
      ' * @param a first', // 9
      ' */', // 10
      'export const add = 1;', // 11
      '/** ```ts', // 12
      ' * not an example: no @example tag', // 13
      ' * ``` */', // 14
    ].join('\n');
    expect(docCommentExamples('src/add.ts', source)).toEqual([
      {
        origin: 'src/add.ts',
        line: 6,
        code: 'const x = 1 * 2;\n  // indented\n',
        fragment: false,
      },
    ]);
  });
});

describe('importedPackages', () => {
  it('names packages, not subpaths, relative files or built-ins', () => {
    const code = [
      "import { a } from '@mrtr/replay/contract-tests';",
      "import pg from 'pg';",
      "import { b } from './b.js';",
      "import { c } from 'node:http';",
      "const d = await import('zod');",
    ].join('\n');
    expect(importedPackages(code).sort()).toEqual(['@mrtr/replay', 'pg', 'zod']);
  });
});

describe('the checker', () => {
  it('reports a type error at its line in the documentation, and nothing for a fragment', () => {
    const found = markdownExamples(
      'README.md',
      README.replace(
        'const d: string = digestJson({ a: 1 });',
        'const d: number = digestJson({ a: 1 });',
      ),
    );
    const problems = compileProblems(found, options);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.where).toBe('README.md:5');
    expect(problems[0]?.message).toMatch(
      /^TS2322: Type 'string' is not assignable to type 'number'/,
    );
  });

  it('compiles examples that are right, each as a module of its own', () => {
    const twice = markdownExamples(
      'README.md',
      '```ts\nconst a = 1;\n```\n\n```ts\nconst a = "x";\n```\n',
    );
    expect(compileProblems(twice, options)).toEqual([]);
  });

  it('reports a mirror that differs from its file, at the first differing line', () => {
    writeFileSync(join(dir, 'shown.ts'), 'const a = 1;\nconst b = 2;\n');
    const readme = '```ts file=shown.ts\nconst a = 1;\nconst b = 3;\n```\n';
    const same = '```ts file=shown.ts\nconst a = 1;\nconst b = 2;\n```\n';
    const origin = join(dir, 'README.md');
    expect(mirrorProblems('/', markdownExamples(origin, same))).toEqual([]);
    const [problem] = mirrorProblems('/', markdownExamples(origin, readme));
    expect(problem?.where).toBe(`${origin}:3`);
    expect(problem?.message).toMatch(/differs from shown.ts \(line 2 there: "const b = 2;"\)/);
  });
});
