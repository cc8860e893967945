/**
 * Inside the claim the service's volumes are read locked: a volume updated
 * in place by a transaction still open when round 2 arrives (a new size, a
 * new row number) is read as it is once that commits, so the question
 * changes and is asked afresh. Read without a lock it was read as it had
 * been, and `DELETE … WHERE service_id` then destroyed the updated row.
 * A row deleted and made again under its id by such a transaction is asked
 * about afresh too, not answered "No service".
 */
import { callTool } from '@mrtr/spec-schema';
import { dropSchema, POSTGRES_URL, postgresReachable } from '@mrtr/test-services';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startServiceDeleter } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { insertService } from '../src/services.js';

const reachable = await postgresReachable();
const TOKEN = 'tok-ops';
const schema = `svc_vol_lock_${process.pid}_${Date.now().toString(36)}`;

describe.skipIf(!reachable)('delete_service with its volumes, one updated meanwhile', () => {
  let db: Database;
  let server: RunningServer;
  let other: pg.Client;

  beforeAll(async () => {
    db = await openDatabase(POSTGRES_URL, { searchPath: schema });
    server = await startServiceDeleter({
      db,
      tokens: new Map([[TOKEN, 'ops']]),
      secret: randomSecret(),
      approvalPage: false,
    });
    other = new pg.Client({ connectionString: POSTGRES_URL });
    await other.connect();
    await other.query(`SET search_path TO ${schema}`);
  });

  afterAll(async () => {
    await server?.close();
    await other?.end();
    await db?.close();
    await dropSchema(schema);
  });

  /** Round 2 of `tool`, sent while `other` holds `change` open for half a second. */
  async function whileOpen(
    tool: string,
    args: Record<string, unknown>,
    inputResponses: Record<string, unknown>,
    change: string[],
  ) {
    const asked = (await callTool(server.url, TOKEN, tool, args)).body.result;
    await other.query('BEGIN');
    for (const sql of change) await other.query(sql);
    const retry = callTool(server.url, TOKEN, tool, args, {
      requestState: asked.requestState,
      inputResponses,
    });
    await new Promise((r) => setTimeout(r, 500));
    await other.query('COMMIT');
    return (await retry).body.result;
  }

  it('a service deleted and made again under its id, still open at round 2: asked afresh about the new row', async () => {
    await db.transaction((tx) =>
      insertService(tx, {
        id: 'svc_again1',
        name: 'again',
        environment: 'staging',
        instances: 1,
        dnsRecords: [],
        volumes: [{ id: 'vol_again1', sizeGb: 10 }],
      }),
    );
    const r = await whileOpen(
      'delete_service',
      { serviceId: 'svc_again1', name: 'again' },
      {
        confirm_delete: {
          action: 'accept',
          content: { serviceName: 'again', deleteVolumes: true },
        },
      },
      [
        "DELETE FROM volumes WHERE id = 'vol_again1'",
        "DELETE FROM services WHERE id = 'svc_again1'",
        "INSERT INTO services (id, name, environment, instances) VALUES ('svc_again1', 'again', 'staging', 1)",
        "INSERT INTO volumes (id, service_id, size_gb, team_id) VALUES ('vol_again1', 'svc_again1', 10, 'platform')",
      ],
    );
    const { rows } = await db.query<{ s: string; v: string }>(
      "SELECT s.incarnation AS s, v.incarnation AS v FROM services s JOIN volumes v ON v.service_id = s.id WHERE s.id = 'svc_again1'",
    );
    expect(r.content?.[0]?.text ?? '').not.toMatch(/^No service/);
    expect(r.resultType).toBe('input_required');
    expect(r.inputRequests.confirm_delete.params.message).toContain(
      `it is service record ${rows[0]?.s} with volume record ${rows[0]?.v}.`,
    );
  });

  it('a volume deleted and made again under its id, still open at round 2: asked afresh about the new row', async () => {
    await db.transaction((tx) =>
      insertService(tx, {
        id: 'svc_again2',
        name: 'again-two',
        environment: 'staging',
        instances: 1,
        dnsRecords: [],
        volumes: [{ id: 'vol_again2', sizeGb: 10 }],
      }),
    );
    const r = await whileOpen(
      'delete_volume',
      { volumeId: 'vol_again2' },
      { confirm_volume: { action: 'accept', content: { volumeId: 'vol_again2' } } },
      [
        "DELETE FROM volumes WHERE id = 'vol_again2'",
        "INSERT INTO volumes (id, service_id, size_gb, team_id) VALUES ('vol_again2', 'svc_again2', 10, 'platform')",
      ],
    );
    const { rows } = await db.query<{ v: string }>(
      "SELECT incarnation AS v FROM volumes WHERE id = 'vol_again2'",
    );
    expect(r.content?.[0]?.text ?? '').not.toMatch(/^No volume/);
    expect(r.resultType).toBe('input_required');
    expect(r.inputRequests.confirm_volume.params.message).toContain(`volume record ${rows[0]?.v}.`);
  });

  it('an update still open at round 2 is waited for, and the question asked afresh', async () => {
    await db.transaction((tx) =>
      insertService(tx, {
        id: 'svc_lock1',
        name: 'locked',
        environment: 'staging',
        instances: 1,
        dnsRecords: [],
        volumes: [{ id: 'vol_lock1', sizeGb: 10 }],
      }),
    );
    const args = { serviceId: 'svc_lock1', name: 'locked' };
    const asked = (await callTool(server.url, TOKEN, 'delete_service', args)).body.result;
    await other.query('BEGIN');
    await other.query(
      "UPDATE volumes SET size_gb = 999, incarnation = nextval('incarnations') WHERE id = 'vol_lock1'",
    );
    const retry = callTool(server.url, TOKEN, 'delete_service', args, {
      requestState: asked.requestState,
      inputResponses: {
        confirm_delete: {
          action: 'accept',
          content: { serviceName: 'locked', deleteVolumes: true },
        },
      },
    });
    await new Promise((r) => setTimeout(r, 500));
    await other.query('COMMIT');
    const r = (await retry).body.result;
    expect(r.resultType).toBe('input_required');
    expect(r.inputRequests.confirm_delete.params.message).toContain('vol_lock1 999 GB');
    const { rows } = await db.query<{ size_gb: number }>(
      "SELECT size_gb FROM volumes WHERE id = 'vol_lock1'",
    );
    expect(rows.map((v) => Number(v.size_gb))).toEqual([999]);
  });
});
