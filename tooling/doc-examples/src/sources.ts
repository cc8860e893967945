/**
 * Where the documentation's examples live: the README of the repository and
 * of every package, app and tool, and the doc comments of the packages' and
 * apps' sources.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { docCommentExamples, type Example, markdownExamples } from './extract.js';

const WORKSPACES = ['packages', 'apps', 'tooling'];

function walk(dir: string, keep: (file: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path, keep) : keep(path) ? [path] : [];
  });
}

/** The Markdown files whose ```ts blocks are examples, relative to `root`. */
export function markdownFiles(root: string): string[] {
  const readmes = WORKSPACES.flatMap((ws) =>
    existsSync(join(root, ws))
      ? readdirSync(join(root, ws))
          .map((name) => join(ws, name, 'README.md'))
          .filter((f) => existsSync(join(root, f)))
      : [],
  );
  return ['README.md', ...readmes.sort()];
}

/** The TypeScript sources whose `@example` blocks are examples, relative to `root`. */
export function sourceFiles(root: string): string[] {
  return ['packages', 'apps']
    .flatMap((ws) =>
      existsSync(join(root, ws))
        ? readdirSync(join(root, ws)).flatMap((name) =>
            walk(join(root, ws, name, 'src'), (f) => f.endsWith('.ts')),
          )
        : [],
    )
    .map((f) => relative(root, f))
    .sort();
}

/** Every example of the documentation under `root`, in a stable order. */
export function collectExamples(root: string): Example[] {
  return [
    ...markdownFiles(root).flatMap((f) => markdownExamples(f, readFileSync(join(root, f), 'utf8'))),
    ...sourceFiles(root).flatMap((f) => docCommentExamples(f, readFileSync(join(root, f), 'utf8'))),
  ];
}

/** The packages an example imports (`@scope/name` or `name`), without `node:` built-ins. */
export function importedPackages(code: string): string[] {
  const found = new Set<string>();
  for (const m of code.matchAll(/\b(?:from|import)\s*\(?\s*'([^']+)'/g)) {
    const spec = m[1] as string;
    if (spec.startsWith('.') || spec.startsWith('node:')) continue;
    const parts = spec.split('/');
    found.add(spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string));
  }
  return [...found];
}
