/**
 * Every quick start runs as written in a new folder holding only the packed
 * tarballs and what its install steps name: the README's first screen
 * (`server.ts`) and `examples/quickstart-{node,express,hono,sdk}.ts`. Each
 * imports nothing its install line leaves out, type-checks under what
 * `tsc --init` writes (strict, exactOptionalPropertyTypes, nodenext), refuses
 * to start without `MRTR_SECRET`, and with it confirms one deletion (round 1
 * asks, an accepted answer completes, the re-send replays), on PostgreSQL for
 * the four files, each in a schema of its own.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  confirmsOneDeletion,
  DATABASE_URL,
  deletedOnceIn,
  type Place,
  runWithoutSecret,
  start,
} from '../../../examples/test/run.js';
import {
  installs,
  missingInstalls,
  nameOf,
  otherSteps,
  prepareQuickStarts,
  QUICK_START_FILES,
  quickStarts,
  readmeStepsAbove,
} from '../src/quickstarts.js';
import { mustSucceed } from '../src/run.js';
import { publishedPackages } from '../src/workspace.js';

const all = quickStarts();
const keep = process.env.KEEP_PACK_CHECK === '1';
let dir: string;
let place: Place;

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
const reachable = await pool.query('SELECT 1').then(
  () => true,
  (e: Error) => {
    // In CI a database that is not there fails the run; it never skips it.
    if (process.env.CI === 'true') throw e;
    console.warn(`PostgreSQL at ${DATABASE_URL} unreachable (${e.message}): skipping its runs`);
    return false;
  },
);

beforeAll(async () => {
  dir = prepareQuickStarts(publishedPackages(), inject('tarballs'), all);
  place = { cwd: dir, tsx: [join(dir, 'node_modules/.bin/tsx')] };
  await mustSucceed(
    'npm install of the quick starts',
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'],
    dir,
  );
  for (const [command = 'npm', ...args] of otherSteps(all))
    await mustSucceed(`${command} ${args.join(' ')}`, command, args, dir);
});

afterAll(async () => {
  await pool.end();
  if (keep) console.log(`kept: quick starts in ${dir}`);
  else if (dir) (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
});

describe('the install steps', () => {
  it('read a version after a name as its range, not as part of it', () => {
    expect(['pg', '@types/node@20', '@a/b@~2.4.0', 'zod@4'].map(nameOf)).toEqual([
      'pg',
      '@types/node',
      '@a/b',
      'zod',
    ]);
  });

  it.each(all.map((q) => [q.origin, q] as const))('of %s install what it imports', (_o, q) => {
    expect(installs(q.steps).runtime.length, `${q.origin} prints an npm install`).toBeGreaterThan(
      0,
    );
    expect(missingInstalls(q, dir), `${q.origin}: ${q.steps.join(' && ')}`).toEqual([]);
  });

  it.each(QUICK_START_FILES)('of %s are those the README prints above it', (file) => {
    const q = all.find((s) => s.file === file);
    expect(readmeStepsAbove(file), `README.md above ${file}`).toEqual(q?.steps);
  });
});

describe('from the tarballs', () => {
  it('type-check under tsc --init strictness', async () => {
    await mustSucceed('tsc -p tsconfig.json (the quick starts)', 'npx', ['tsc', '-p', '.'], dir);
  });

  describe.each(all.map((q) => [q.origin, q] as const))('%s', (_origin, q) => {
    const schema = `mrtr_pack_${q.file.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
    if (q.postgres) {
      beforeAll(async () => {
        if (reachable) await pool.query(`CREATE SCHEMA ${schema}`);
      });
      afterAll(async () => {
        if (reachable) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      });
    }

    it('does not start without MRTR_SECRET, and says how to make one', async () => {
      const { code, stderr } = await runWithoutSecret(q.file, place);
      expect(code).not.toBe(0);
      expect(stderr).toContain('openssl rand -base64 32');
    });

    it.skipIf(q.postgres && !reachable)(
      'asks, then deletes once; the re-send replays',
      async () => {
        const server = await start(q.file, q.postgres ? schema : undefined, place);
        try {
          await confirmsOneDeletion(server);
          if (q.postgres) await deletedOnceIn(pool, schema);
        } finally {
          server.stop();
        }
      },
    );
  });
});
