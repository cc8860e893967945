import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The monorepo's root directory (this file is `tooling/pack-check/src/workspace.ts`). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** One package npm would publish: every workspace package not marked `private`. */
export interface PublishedPackage {
  name: string;
  version: string;
  /** Directory relative to {@link ROOT}, e.g. `packages/gate`. */
  dir: string;
  /** `engines.node` as declared. */
  engines: string;
  /** Whether it declares types (`types` or `exports`): a CLI with only `bin` does not. */
  hasTypes: boolean;
  /** Whether it has a CommonJS entry (`exports["."].require`). */
  hasRequire: boolean;
  /** File name `pnpm pack` gives its tarball. */
  tarball: string;
}

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  engines?: { node?: string };
  types?: string;
  exports?: Record<string, unknown>;
}

/** The published packages of `packages/*` and `apps/*`, by name. */
export function publishedPackages(): PublishedPackage[] {
  const found: PublishedPackage[] = [];
  for (const group of ['packages', 'apps']) {
    for (const entry of readdirSync(join(ROOT, group), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const dir = `${group}/${entry.name}`;
      let manifest: Manifest;
      try {
        manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as Manifest;
      } catch {
        continue;
      }
      if (manifest.private) continue;
      const dot = manifest.exports?.['.'] as { require?: unknown } | undefined;
      found.push({
        name: manifest.name,
        version: manifest.version,
        dir,
        engines: manifest.engines?.node ?? '',
        hasTypes: manifest.types !== undefined || manifest.exports !== undefined,
        hasRequire: dot?.require !== undefined,
        tarball: `${manifest.name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`,
      });
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** The pnpm the repository pins (`packageManager`), as `npx` arguments: `['-y', 'pnpm@12.4.2']`. */
export function pinnedPnpm(): string[] {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    packageManager?: string;
  };
  return ['-y', root.packageManager ?? 'pnpm'];
}

/**
 * Whether an `engines.node` range admits a Node.js without `require(esm)`
 * (before 20.19, or 22.0 to 22.11): ranges of the form `>=20`, `>=20.3`.
 * The ranges this repository writes are `>=20[.x]` or `^20.19.0 || >=22.12.0`.
 */
export function admitsNodeWithoutRequireEsm(range: string): boolean {
  const floor = /^>=\s*20(?:\.(\d+))?(?:\.\d+)?$/.exec(range.trim());
  return floor !== null && Number(floor[1] ?? 0) < 19;
}
