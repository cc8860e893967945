/**
 * `changeset version` and `changeset status` stop at a changeset that names
 * both a package `.changeset/config.json` ignores and one it does not
 * ("Mixed changesets … are not allowed"), which holds up every release. So
 * each changeset names ignored packages only or none, and every package it
 * names is one of the workspace's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const dir = join(root, '.changeset');
const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { ignore: string[] };

/** The names of the workspace's packages. */
function workspacePackages(): Set<string> {
  const names = new Set<string>([
    JSON.parse(readFileSync(join(root, 'examples', 'package.json'), 'utf8')).name,
  ]);
  for (const group of ['packages', 'apps', 'tooling']) {
    for (const name of readdirSync(join(root, group))) {
      try {
        names.add(JSON.parse(readFileSync(join(root, group, name, 'package.json'), 'utf8')).name);
      } catch {
        // not a package
      }
    }
  }
  return names;
}

/** The packages a changeset's front matter names. */
function named(text: string): string[] {
  const front = /^---\n([\s\S]*?)---\n/.exec(text)?.[1] ?? '';
  return [...front.matchAll(/^"([^"]+)":\s*(?:patch|minor|major)\s*$/gm)].map(
    (m) => m[1] as string,
  );
}

const changesets = readdirSync(dir).filter((f) => f.endsWith('.md') && f !== 'README.md');

describe('the changesets', () => {
  it('are read', () => {
    expect(changesets.length).toBeGreaterThan(0);
    expect(named('---\n"@mrtr/gate": minor\n"@mrtr/sdk": patch\n---\n\ntext\n')).toEqual([
      '@mrtr/gate',
      '@mrtr/sdk',
    ]);
  });

  it('name packages of this workspace, and never an ignored one beside others', () => {
    const known = workspacePackages();
    const ignored = new Set(config.ignore);
    const problems = changesets.flatMap((file) => {
      const names = named(readFileSync(join(dir, file), 'utf8'));
      const unknown = names.filter((n) => !known.has(n)).map((n) => `${file}: ${n} is no package`);
      const mixed =
        names.some((n) => ignored.has(n)) && names.some((n) => !ignored.has(n))
          ? [`${file}: names ignored and other packages (split it)`]
          : [];
      return [...unknown, ...mixed];
    });
    expect(problems).toEqual([]);
  });
});
