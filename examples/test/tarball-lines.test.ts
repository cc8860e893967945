/**
 * Until the first release the packages install only from tarballs, and a
 * tarball brings none of the `@mrtr` packages it depends on: an install line
 * that leaves one out stops with `E404`. Every `npm install /tmp/mrtr/…`
 * line of the README and of the example files' headers names each `@mrtr`
 * package its others depend on; each example file's line names every one it
 * imports; and the README's table of what each package needs matches the
 * packages' manifests.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { examplesDir, readme } from './run.js';

const root = join(examplesDir, '..');

/** Each published `@mrtr` package, by short name (`gate`), with the `@mrtr` packages it needs. */
function manifests(): Map<string, string[]> {
  const needs = new Map<string, string[]>();
  for (const dir of readdirSync(join(root, 'packages'))) {
    let m: {
      name: string;
      private?: boolean;
      dependencies?: object;
      peerDependencies?: object;
    };
    try {
      m = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    if (m.private || !m.name.startsWith('@mrtr/')) continue;
    const deps = Object.keys({ ...m.dependencies, ...m.peerDependencies });
    needs.set(
      m.name.slice('@mrtr/'.length),
      deps.filter((d) => d.startsWith('@mrtr/')).map((d) => d.slice('@mrtr/'.length)),
    );
  }
  return needs;
}

const NEEDS = manifests();

/** `names` with every package they need, transitively. */
function closure(names: Iterable<string>): Set<string> {
  const found = new Set<string>();
  const visit = (name: string) => {
    if (found.has(name)) return;
    found.add(name);
    for (const d of NEEDS.get(name) ?? []) visit(d);
  };
  for (const n of names) visit(n);
  return found;
}

/** The short names of each `npm install /tmp/mrtr/mrtr-{a,b}-[0-9]*.tgz` in `text`. */
function tarballLines(text: string): string[][] {
  return [...text.matchAll(/npm install \/tmp\/mrtr\/mrtr-\{([^}]+)\}-\[0-9\]\*\.tgz/g)].map((m) =>
    (m[1] as string).split(','),
  );
}

const sorted = (s: Iterable<string>) => [...s].sort();

const EXAMPLES = readdirSync(examplesDir).filter((f) => f.endsWith('.ts'));

describe('the tarball install lines', () => {
  it('find the packages of this repository', () => {
    expect(NEEDS.get('gate')).toEqual(expect.arrayContaining(['digest', 'replay', 'ticket']));
    expect(EXAMPLES).toContain('strongest-express.ts');
    expect(closure(['express'])).toEqual(new Set(['express', 'node', 'server', 'wire']));
  });

  it('of the README name every @mrtr package the others need', () => {
    const lines = tarballLines(readme());
    expect(lines.length).toBeGreaterThanOrEqual(6);
    for (const names of lines) {
      for (const n of names) expect(NEEDS.has(n), `@mrtr/${n} is a published package`).toBe(true);
      expect(sorted(closure(names)), names.join(',')).toEqual(sorted(new Set(names)));
    }
  });

  it.each(EXAMPLES)('of %s name what it imports and what that needs', (file) => {
    const code = readFileSync(join(examplesDir, file), 'utf8');
    const header = code
      .split('\n')
      .filter((l) => l.startsWith('//'))
      .join('\n');
    const lines = tarballLines(header);
    expect(lines, `${file} prints the install line for tarballs`).toHaveLength(1);
    const names = lines[0] as string[];
    const imported = [...code.matchAll(/from '@mrtr\/([a-z-]+)'/g)].map((m) => m[1] as string);
    expect(imported.length).toBeGreaterThan(0);
    expect(sorted(new Set(names))).toEqual(sorted(closure(imported)));
  });

  it("of the README's table say what each package needs", () => {
    const rows = [...readme().matchAll(/^\| (`[a-z-]+`(?:, `[a-z-]+`)*) \| ([^|]+) \|$/gm)];
    const table = rows.map((r) => ({
      forNames: [...(r[1] as string).matchAll(/`([a-z-]+)`/g)].map((m) => m[1] as string),
      also: [...(r[2] as string).matchAll(/`([a-z-]+)`/g)].map((m) => m[1] as string),
    }));
    const covered = table.flatMap((r) => r.forNames);
    expect(sorted(covered)).toEqual(sorted(NEEDS.keys()));
    for (const { forNames, also } of table) {
      const needed = new Set<string>();
      for (const n of forNames) for (const d of closure([n])) if (d !== n) needed.add(d);
      // A row of several packages lists what any of them needs, so one may need another of the row.
      expect(sorted(new Set(also)), forNames.join(', ')).toEqual(sorted(needed));
    }
  });
});
