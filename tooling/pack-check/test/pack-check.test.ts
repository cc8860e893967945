import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { prepareConsumer } from '../src/consumer.js';
import { mustSucceed, run } from '../src/run.js';
import {
  admitsNodeWithoutRequireEsm,
  pinnedPnpm,
  publishedPackages,
  ROOT,
} from '../src/workspace.js';

// Gate on what npm would publish: the tarballs test/pack.setup.ts packed.
const packages = publishedPackages();
const pnpm = pinnedPnpm();
const attw = join(ROOT, 'tooling/pack-check/src/attw.mjs');
const keep = process.env.KEEP_PACK_CHECK === '1';
const tarballs = inject('tarballs');
let consumer: string | undefined;

afterAll(() => {
  if (keep) console.log(`kept: consumer in ${consumer}`);
  else if (consumer) rmSync(consumer, { recursive: true, force: true });
});

describe('every published package', () => {
  it('is packed, with its LICENSE, README and CHANGELOG', async () => {
    for (const p of packages) {
      expect(existsSync(join(tarballs, p.tarball)), `${p.name}: ${p.tarball}`).toBe(true);
      const listing = await run('tar', ['-tzf', join(tarballs, p.tarball)], tarballs);
      const files = listing.stdout.split('\n');
      for (const file of ['package/LICENSE', 'package/README.md', 'package/CHANGELOG.md'])
        expect(files, `${p.name} ships ${file}`).toContain(file);
    }
  });

  it.each(packages.map((p) => [p.name, p] as const))('publint --strict: %s', async (_name, p) => {
    const tarball = readFileSync(join(tarballs, p.tarball));
    const { messages, pkg } = await publint({
      pack: {
        tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength),
      },
      strict: true,
      level: 'suggestion',
    });
    const shown = messages.map((m) => `${m.type}: ${formatMessage(m, pkg) ?? m.code}`);
    expect(shown, `publint on ${p.tarball}`).toEqual([]);
  });

  // attw's engine (@arethetypeswrong/core) on every tarball in one process, profile strict:
  // node10, node16 from CommonJS and from ESM, bundler; no problem kind ignored. A package
  // with neither `types` nor `exports` (the `mrtr` CLI: `bin` only) has no types to check.
  describe('attw, profile strict', () => {
    let found: Record<string, { types: boolean; problems: string[] }>;
    beforeAll(async () => {
      const files = packages.map((p) => join(tarballs, p.tarball));
      const r = await mustSucceed('attw', 'node', [attw, ...files], ROOT);
      found = JSON.parse(r.stdout);
    });
    it.each(packages.map((p) => [p.name, p] as const))('%s', (_name, p) => {
      const result = found[join(tarballs, p.tarball)];
      expect(result, p.tarball).toBeDefined();
      expect(result?.types, `${p.name} declares types`).toBe(p.hasTypes);
      expect(result?.problems, `attw on ${p.tarball}`).toEqual([]);
    });
  });

  it('pnpm publish --dry-run is clean', async () => {
    const filters = packages.flatMap((p) => ['--filter', p.name]);
    const r = await mustSucceed(
      'pnpm publish --dry-run',
      'npx',
      [...pnpm, '-r', ...filters, 'publish', '--dry-run', '--no-git-checks'],
      ROOT,
    );
    const warnings = `${r.stdout}\n${r.stderr}`
      .split('\n')
      .filter((line) => /WARN|ERR/.test(line) && !/Skip publishing .* \(dry run\)/.test(line));
    expect(warnings, 'publish --dry-run warnings').toEqual([]);
    for (const p of packages) expect(r.stdout, p.name).toContain(`${p.name}@${p.version}`);
  });
});

describe('a consumer outside the workspace, from the tarballs', () => {
  beforeAll(async () => {
    consumer = prepareConsumer(packages, tarballs);
    await mustSucceed(
      'npm install of the tarballs',
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'],
      consumer,
    );
  });

  it('has one copy of each peer the app owns (ioredis, @opentelemetry/api)', () => {
    const dir = consumer as string;
    for (const [peer, version] of [
      ['ioredis', '5.'],
      ['@opentelemetry/api', '1.8.0'],
    ] as const) {
      const top = JSON.parse(readFileSync(join(dir, 'node_modules', peer, 'package.json'), 'utf8'));
      expect(top.version, peer).toMatch(new RegExp(`^${version.replace('.', '\\.')}`));
      for (const p of ['@mrtr/gate', '@mrtr/replay-redis'])
        expect(
          existsSync(join(dir, 'node_modules', p, 'node_modules', peer)),
          `${p} nests ${peer}`,
        ).toBe(false);
    }
  });

  // Both at once (they take most of the time). node16 also checks every declaration file
  // (skipLibCheck false): a .d.cts importing an ES-module-only package fails there. The
  // bundler pass reads the same declarations, so it skips that part.
  it('compiles under strict TypeScript, module node16 and moduleResolution bundler', async () => {
    const dir = consumer as string;
    const results = await Promise.allSettled([
      mustSucceed('tsc (module node16)', 'npx', ['tsc', '-p', 'tsconfig.node16.json'], dir),
      mustSucceed(
        'tsc (moduleResolution bundler)',
        'npx',
        ['tsc', '-p', 'tsconfig.bundler.json'],
        dir,
      ),
    ]);
    const failed = results.flatMap((r) =>
      r.status === 'rejected' ? [String(r.reason?.message ?? r.reason)] : [],
    );
    if (failed.length > 0) throw new Error(failed.join('\n\n'));
  });

  it('runs a gated tool end to end as an ES module and as CommonJS', async () => {
    const env = { MRTR_SECRET: randomBytes(32).toString('base64') };
    const esm = await mustSucceed('the ESM consumer', 'node', ['out/esm.mjs'], consumer as string, {
      env,
    });
    expect(esm.stdout).toContain('esm: round 1 input_required, round 2 accepted and complete');
    const cjs = await mustSucceed(
      'the CommonJS consumer',
      'node',
      ['out/cjs.cjs'],
      consumer as string,
      { env },
    );
    expect(cjs.stdout).toContain('cjs: round 1 input_required, round 2 accepted and complete');
  });

  it('loads every CommonJS build whose engines admit a Node without require(esm)', async () => {
    const names = packages
      .filter((p) => p.hasRequire && admitsNodeWithoutRequireEsm(p.engines))
      .map((p) => p.name);
    expect(names.length).toBeGreaterThan(0);
    await mustSucceed(
      'require() without require(esm)',
      'node',
      ['--no-experimental-require-module', 'require-without-esm.cjs', ...names],
      consumer as string,
    );
  });
});
