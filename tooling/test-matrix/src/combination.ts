import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '@mrtr/example-kit';
import type { McpEndpoint } from '@mrtr/server';
import { createFileDeleterEndpoint } from '../../../apps/file-deleter/src/app.js';
import { createNotesEndpoint } from '../../../apps/notes-server/src/app.js';
import { createNotesSdkEndpoint } from '../../../apps/notes-server/src/sdk-app.js';
import { createServiceDeleterEndpoint } from '../../../apps/service-deleter/src/app.js';
import {
  ADAPTERS,
  type AdapterName,
  appAuthenticates,
  type Listening,
  serveWith,
} from './adapters.js';
import { type GivenStore, openBackend, STORES, type StoreName } from './backends.js';

/** The example apps under test. */
export const APPS = ['notes-server', 'service-deleter', 'file-deleter'] as const;
export type AppName = (typeof APPS)[number];

/** One cell row of the matrix: an app served by an adapter on a replay store. */
export interface Combination {
  app: AppName;
  adapter: AdapterName;
  store: StoreName;
  /** `notes-server · express · redis` */
  label: string;
  /** `[a-z0-9_]+`, for schema names and key prefixes. */
  slug: string;
}

/** The adapters an app is served with: `sdk` only where the app has an SDK entry point. */
export const adaptersOf = (app: AppName): readonly AdapterName[] =>
  app === 'notes-server' ? ADAPTERS : ADAPTERS.filter((a) => a !== 'sdk');

/** Every app × adapter × store, apps outermost. */
export const COMBINATIONS: Combination[] = APPS.flatMap((app) =>
  adaptersOf(app).flatMap((adapter) =>
    STORES.map((store) => ({
      app,
      adapter,
      store,
      label: `${app} · ${adapter} · ${store}`,
      slug: `${app.replace(/-.*/, '')}_${adapter}_${store}`,
    })),
  ),
);

/**
 * The clock both instances mint and open tickets with: `Date.now()` plus
 * `offsetMs`. A scenario that needs a ticket minted in the past sets a
 * negative offset for round 1 and puts it back to 0.
 */
export interface TestClock {
  offsetMs: number;
  now(): number;
}

/** The principals of the matrix and their bearer tokens (fresh per combination). */
export interface Principals {
  alice: { id: 'alice'; token: string };
  bob: { id: 'bob'; token: string };
}

/** A combination running: two instances sharing one database and one replay store. */
export interface RunningCombination {
  combination: Combination;
  /** The MCP endpoint URLs of instance A and instance B. */
  urls: [string, string];
  /** The app database, to assert what was mutated. */
  db: Database;
  /** The files root both instances serve (`file-deleter` only): a fresh temporary folder. */
  files: string;
  clock: TestClock;
  principals: Principals;
  close(): Promise<void>;
}

interface AppOptions {
  db: Database;
  tokens: Map<string, string>;
  secret: Uint8Array;
  now: () => number;
  store?: GivenStore;
  files: string;
}

/** The app's endpoint for `adapter`, and what closes it (the SDK bridge's 2025-era sessions). */
async function createEndpoint(
  app: AppName,
  adapter: AdapterName,
  { store, files, ...options }: AppOptions,
): Promise<{ endpoint: McpEndpoint; close?: () => Promise<void> }> {
  const given = { ...options, ...(store ? { store } : {}) };
  if (adapter === 'sdk') return createNotesSdkEndpoint(given);
  if (app === 'notes-server') return { endpoint: await createNotesEndpoint(given) };
  if (app === 'file-deleter')
    return { endpoint: await createFileDeleterEndpoint({ ...given, root: files }) };
  // The framework authenticates under express and hono: alice and bob are the platform team either way.
  return { endpoint: await createServiceDeleterEndpoint({ ...given, members: ['alice', 'bob'] }) };
}

/**
 * Start both instances of `c`: one ticket secret, one database, one replay
 * store, one clock; each instance its own endpoint and HTTP server.
 * @param run unique to the test run: `[a-z0-9_]+`
 * @throws when a service cannot be reached or a port bound
 */
export async function startCombination(c: Combination, run: string): Promise<RunningCombination> {
  const backend = await openBackend(c.store, `${run}_${c.slug}`);
  const principals: Principals = {
    alice: { id: 'alice', token: `tok-alice-${randomBytes(9).toString('base64url')}` },
    bob: { id: 'bob', token: `tok-bob-${randomBytes(9).toString('base64url')}` },
  };
  const tokens = new Map([
    [principals.alice.token, principals.alice.id],
    [principals.bob.token, principals.bob.id],
  ]);
  const clock: TestClock = { offsetMs: 0, now: () => Date.now() + clock.offsetMs };
  const secret = new Uint8Array(randomBytes(32));
  const files = mkdtempSync(join(tmpdir(), `mrtr-matrix-${c.slug}-`));
  const removeFiles = () => rmSync(files, { recursive: true, force: true });
  const instances: Listening[] = [];
  const closers: (() => Promise<void>)[] = [];
  try {
    for (const i of [0, 1] as const) {
      const { endpoint, close } = await createEndpoint(c.app, c.adapter, {
        db: backend.dbs[i],
        tokens: appAuthenticates(c.adapter) ? tokens : new Map(),
        secret,
        now: () => clock.now(),
        store: backend.stores[i],
        files,
      });
      if (close) closers.push(close);
      instances.push(await serveWith(c.adapter, endpoint, tokens));
    }
  } catch (error) {
    for (const instance of instances) await instance.close();
    for (const close of closers) await close();
    await backend.close();
    removeFiles();
    throw error;
  }
  const [a, b] = instances as [Listening, Listening];
  return {
    combination: c,
    urls: [a.url, b.url],
    db: backend.dbs[0],
    files,
    clock,
    principals,
    async close() {
      await a.close();
      await b.close();
      for (const close of closers) await close();
      await backend.close();
      removeFiles();
    },
  };
}
