import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { mustSucceed } from '../src/run.js';
import { pinnedPnpm, publishedPackages, ROOT } from '../src/workspace.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The directory `pnpm pack` wrote every published package's tarball to. */
    tarballs: string;
  }
}

/**
 * Pack every published package once (from the built packages: turbo builds
 * them first) for both test files; remove the tarballs afterwards unless
 * `KEEP_PACK_CHECK=1`.
 */
export default async function packOnce(project: TestProject): Promise<() => void> {
  const tarballs = mkdtempSync(join(tmpdir(), 'mrtr-tarballs-'));
  const filters = publishedPackages().flatMap((p) => ['--filter', p.name]);
  await mustSucceed(
    'pnpm pack of every published package',
    'npx',
    [...pinnedPnpm(), '-r', ...filters, 'pack', '--pack-destination', tarballs],
    ROOT,
  );
  project.provide('tarballs', tarballs);
  return () => {
    if (process.env.KEEP_PACK_CHECK === '1') console.log(`kept: tarballs in ${tarballs}`);
    else rmSync(tarballs, { recursive: true, force: true });
  };
}
