/**
 * `mrtr` end to end in a real terminal (tmux) against a running service
 * deleter: the person reads the blast radius, types the service name (a typo
 * first, which is asked again), keeps the volume, and the service is gone.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type RunningServer,
  randomSecret,
  startServiceDeleter,
} from '../../service-deleter/src/app.js';
import { type Database, openDatabase } from '../../service-deleter/src/db.js';
import { TmuxSession, tmuxAvailable } from './tmux.js';

const MAIN = join(import.meta.dirname, '../dist/main.js');
const TOKEN = 'tok-e2e-service';
const hasTmux = tmuxAvailable();

let db: Database;
let server: RunningServer;
const sessions: TmuxSession[] = [];

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`build mrtr first: ${MAIN} is missing`);
  db = await openDatabase('memory://');
  server = await startServiceDeleter({
    db,
    tokens: new Map([[TOKEN, 'ops']]),
    secret: randomSecret(),
    approvalPage: false, // the terminal answers forms here; URL mode has its own test
  });
});
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

const active = (title: string) => new RegExp(`[◆*]  ${title.replace(/[?]/g, '\\?')}`);
const exists = async (table: 'services' | 'volumes', id: string) =>
  (await db.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id])).rows.length === 1;

describe.skipIf(!hasTmux)('mrtr deleting a service', () => {
  it('states what will be destroyed, re-asks after a typo, deletes api-prod and keeps its volume', async () => {
    const t = new TmuxSession(
      [
        process.execPath,
        MAIN,
        'call',
        server.url,
        'delete_service',
        '--arg',
        'serviceId=svc_8f21c',
        '--arg',
        'name=api-prod',
      ],
      { MRTR_TOKEN: TOKEN, NO_COLOR: '1' },
    );
    sessions.push(t);
    let screen = await t.waitFor(active('What would you like to do?'));
    expect(screen).toContain('Question from "mrtr-service-deleter"');
    expect(screen).toContain(
      'Delete "api-prod" (svc_8f21c, production)? This removes 3 running instances',
    );
    expect(screen).toContain('vol_31ab 48 GB');
    t.keys(['Enter']); // Answer

    await t.waitFor(active('Service name'));
    t.keys(['api-prd'], true);
    t.keys(['Enter']);
    await t.waitFor(active('Also destroy the attached volume'));
    t.keys(['Enter']); // keep the default: no
    await t.waitFor(active('Send these answers?'));
    t.keys(['Enter']); // Send

    // The server asks again with the same question and says the name did not match.
    screen = await t.waitFor(/did not match/);
    expect(await exists('services', 'svc_8f21c')).toBe(true);
    await t.waitFor(active('What would you like to do?'));
    t.keys(['Enter']);
    await t.waitFor(active('Service name'));
    t.keys(['api-prod'], true);
    t.keys(['Enter']);
    await t.waitFor(active('Also destroy the attached volume'));
    t.keys(['Enter']);
    await t.waitFor(active('Send these answers?'));
    t.keys(['Enter']);

    screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain('Deleted "api-prod" (svc_8f21c)');
    expect(screen).toContain('Volumes retained: vol_31ab (48 GB)');
    expect(screen).toContain('[mrtr exited 0]');
    expect(await exists('services', 'svc_8f21c')).toBe(false);
    expect(await exists('volumes', 'vol_31ab')).toBe(true);
  });
});
