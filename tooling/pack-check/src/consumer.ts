import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PublishedPackage, ROOT } from './workspace.js';

/** The consumer's sources (`tooling/pack-check/consumer/`). */
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../consumer');

/**
 * Registry versions the consumer installs beside the tarballs: the lowest
 * majors and minors the peers admit where that is what could break (ioredis 5,
 * @opentelemetry/api 1.8), and what a TypeScript consumer adds itself.
 */
export const CONSUMER_REGISTRY_DEPENDENCIES = {
  '@opentelemetry/api': '1.8.0',
  '@types/express': '^5.0.6',
  '@types/node': '^20.19.0',
  ioredis: '^5.0.0',
  typescript: '5.9.3',
  zod: '^4.1.0',
} as const;

/**
 * A new directory under the system's temporary directory (outside the
 * workspace, so nothing resolves from its `node_modules`) holding the
 * consumer's sources and a `package.json` that installs every tarball of
 * `tarballDir`. Each `@mrtr/*` is also an npm override, so packages that
 * depend on one another get the tarball, never a registry copy.
 * @returns the directory.
 */
export function prepareConsumer(packages: readonly PublishedPackage[], tarballDir: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-consumer-'));
  if (dir.startsWith(`${ROOT}/`))
    throw new Error(`consumer directory ${dir} is inside the workspace`);
  const dependencies: Record<string, string> = { ...CONSUMER_REGISTRY_DEPENDENCIES };
  const overrides: Record<string, string> = {};
  for (const p of packages) {
    dependencies[p.name] = `file:${join(tarballDir, p.tarball)}`;
    overrides[p.name] = `$${p.name}`;
  }
  const manifest = { name: 'mrtr-consumer', private: true, dependencies, overrides };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const file of [
    'flow.mts',
    'esm.mts',
    'cjs.cts',
    'entries.mts',
    'entries.cts',
    'require-without-esm.cjs',
    'tsconfig.node16.json',
    'tsconfig.bundler.json',
  ])
    copyFileSync(join(FIXTURES, file), join(dir, file));
  // The same flow as CommonJS: TypeScript compiles a .cts file's imports to require().
  writeFileSync(join(dir, 'flow.cts'), readFileSync(join(FIXTURES, 'flow.mts'), 'utf8'));
  return dir;
}
