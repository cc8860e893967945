/**
 * The service deleter over real HTTP: undeclared arguments never reach the
 * gate, and tool calls are rate limited per principal (`rateLimit` of `app.ts`).
 */
import { callTool } from '@mrtr/spec-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startServiceDeleter } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';

let db: Database;
let server: RunningServer;

beforeAll(async () => {
  db = await openDatabase('memory://');
  server = await startServiceDeleter({
    db,
    tokens: new Map([
      ['tok-eve', 'eve'],
      ['tok-fay', 'fay'],
    ]),
    secret: randomSecret(),
    // 50 an hour, not the default 300 a minute: on a loaded host a burst of 400 took over
    // 20 s to arrive, and the default's refill (5 a second) absorbed the overflow.
    rateLimit: { limit: 50, windowMs: 3_600_000 },
  });
});
afterAll(async () => {
  await server.close();
  await db.close();
});

describe('service deleter inputs', () => {
  it('an undeclared argument is -32602 naming it, before any question is asked', async () => {
    const r = await callTool(server.url, 'tok-eve', 'delete_service', {
      serviceId: 'svc_x',
      name: 'x',
      force: 'y'.repeat(100_000),
    });
    expect(r.body.error).toMatchObject({ code: -32602, data: { argument: 'force' } });
    expect(JSON.stringify(r.body).length).toBeLessThan(1000);
  });

  it('a burst of tool calls from one principal is cut off with 429; another principal goes on', async () => {
    const burst = await Promise.all(
      Array.from({ length: 80 }, () =>
        callTool(server.url, 'tok-fay', 'delete_service', { serviceId: 'svc_x', name: 'x', n: 1 }),
      ),
    );
    const limited = burst.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const r of limited) expect(r.body.error.code).toBe(-31429);
    const other = await callTool(server.url, 'tok-eve', 'delete_service', {
      serviceId: 'svc_x',
      name: 'x',
      n: 1,
    });
    expect(other.status).toBe(200);
  });
});
