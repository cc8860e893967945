import { callTool, rpc } from '@mrtr/spec-schema';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startServiceDeleter } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { describeDeletion, insertService } from '../src/services.js';

const TOKEN = 'tok-ops';
let db: Database;
let server: RunningServer;
let url: string;

beforeAll(async () => {
  db = await openDatabase('memory://');
  server = await startServiceDeleter({
    db,
    tokens: new Map([[TOKEN, 'ops']]),
    secret: randomSecret(),
    approvalPage: false, // every confirmation by form here; the page has its own tests
  });
  url = server.url;
});
afterAll(async () => {
  await server.close();
  await db.close();
});

let n = 0;
let svc: { id: string; name: string; vol: string };
beforeEach(async () => {
  n++;
  svc = { id: `svc_t${n}`, name: `web-${n}`, vol: `vol_t${n}` };
  await insertTestService();
});

/** This test's service `svc`: production, 3 instances, one DNS record, volume `svc.vol` of 48 GB. */
const insertTestService = () =>
  db.transaction((tx) =>
    insertService(tx, {
      id: svc.id,
      name: svc.name,
      environment: 'production',
      instances: 3,
      dnsRecords: [`web${n}.example.com`],
      volumes: [{ id: svc.vol, sizeGb: 48 }],
    }),
  );

const exists = async (table: 'services' | 'volumes', id: string) =>
  (await db.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id])).rows.length === 1;
const instances = async (id: string) =>
  Number(
    (await db.query<{ instances: number }>('SELECT instances FROM services WHERE id = $1', [id]))
      .rows[0]?.instances,
  );

async function askDelete() {
  const r = await callTool(url, TOKEN, 'delete_service', { serviceId: svc.id, name: svc.name });
  expect(r.body.result.resultType).toBe('input_required');
  return r.body.result;
}
const typed = (serviceName: string, deleteVolumes?: boolean) => ({
  confirm_delete: {
    action: 'accept',
    content: { serviceName, ...(deleteVolumes === undefined ? {} : { deleteVolumes }) },
  },
});

describe('delete_service', () => {
  it('states the blast radius and asks for the typed name, keyed confirm_delete', async () => {
    const first = await askDelete();
    const q = first.inputRequests.confirm_delete;
    expect(q.method).toBe('elicitation/create');
    expect(q.params.message).toContain('3 running instances');
    expect(q.params.message).toContain(`web${n}.example.com`);
    expect(q.params.message).toMatch(new RegExp(`${svc.vol} 48 GB`));
    // The default answer keeps the volume: the question must not say it is removed.
    expect(q.params.message).toMatch(
      new RegExp(
        `Its volume \\(${svc.vol} 48 GB\\) is kept unless you also choose to destroy it\\.`,
      ),
    );
    expect(q.params.message).not.toMatch(/removes[^.]*volume/);
    expect(q.params.requestedSchema).toMatchObject({
      properties: {
        serviceName: { type: 'string' },
        deleteVolumes: { type: 'boolean', default: false },
      },
      required: ['serviceName'],
    });
  });

  it('a name that does not match asks again with the same ticket; the right name deletes and keeps the volume', async () => {
    const first = await askDelete();
    const args = { serviceId: svc.id, name: svc.name };
    const wrong = await callTool(url, TOKEN, 'delete_service', args, {
      inputResponses: typed(`${svc.name}x`),
      requestState: first.requestState,
    });
    expect(wrong.body.result.resultType).toBe('input_required');
    expect(wrong.body.result.requestState).toBe(first.requestState);
    expect(wrong.body.result.inputRequests.confirm_delete.params.message).toMatch(/did not match/);
    expect(await exists('services', svc.id)).toBe(true);

    const right = await callTool(url, TOKEN, 'delete_service', args, {
      inputResponses: typed(svc.name),
      requestState: first.requestState,
    });
    expect(right.body.result).toMatchObject({ resultType: 'complete', isError: false });
    expect(right.body.result.content[0].text).toMatch(
      new RegExp(`retained: ${svc.vol} \\(48 GB\\)`),
    );
    expect(right.body.result.structuredContent.retained.volumes).toEqual([
      { id: svc.vol, sizeGb: 48 },
    ]);
    expect(await exists('services', svc.id)).toBe(false);
    expect(await exists('volumes', svc.vol)).toBe(true);
  });

  it('deleteVolumes: true destroys the volumes too', async () => {
    const first = await askDelete();
    const r = await callTool(
      url,
      TOKEN,
      'delete_service',
      { serviceId: svc.id, name: svc.name },
      {
        inputResponses: typed(svc.name, true),
        requestState: first.requestState,
      },
    );
    expect(r.body.result.structuredContent.deleted.volumes).toEqual([{ id: svc.vol, sizeGb: 48 }]);
    expect(await exists('volumes', svc.vol)).toBe(false);
  });

  it('a service changed since the form was shown is not deleted; a fresh question states the new facts', async () => {
    const first = await askDelete();
    await db.query('UPDATE services SET instances = 7, revision = revision + 1 WHERE id = $1', [
      svc.id,
    ]);
    const r = await callTool(
      url,
      TOKEN,
      'delete_service',
      { serviceId: svc.id, name: svc.name },
      {
        inputResponses: typed(svc.name),
        requestState: first.requestState,
      },
    );
    expect(r.body.result.resultType).toBe('input_required');
    expect(r.body.result.requestState).not.toBe(first.requestState);
    expect(r.body.result.inputRequests.confirm_delete.params.message).toContain(
      '7 running instances',
    );
    expect(await exists('services', svc.id)).toBe(true);
  });

  it('a renamed or deleted service is a complete isError result and nothing happens', async () => {
    const first = await askDelete();
    await db.query("UPDATE services SET name = 'renamed', revision = revision + 1 WHERE id = $1", [
      svc.id,
    ]);
    const r = await callTool(
      url,
      TOKEN,
      'delete_service',
      { serviceId: svc.id, name: svc.name },
      {
        inputResponses: typed(svc.name),
        requestState: first.requestState,
      },
    );
    expect(r.body.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(await exists('services', svc.id)).toBe(true);
    const gone = await callTool(url, TOKEN, 'delete_service', { serviceId: 'svc_nope', name: 'x' });
    expect(gone.body.result).toMatchObject({ resultType: 'complete', isError: true });
  });

  /** The retry of `ticket` with the typed name: asked afresh about what is there now, its ticket spent. */
  async function askedAfresh(ticket: string) {
    const args = { serviceId: svc.id, name: svc.name };
    const retry = () =>
      callTool(url, TOKEN, 'delete_service', args, {
        inputResponses: typed(svc.name, true),
        requestState: ticket,
      });
    const afresh = (await retry()).body.result;
    expect(afresh.resultType).toBe('input_required');
    expect(afresh.requestState).not.toBe(ticket);
    // Sent again (its response lost): the fresh question once more, under a ticket of its own; the
    // spent ticket deletes nothing (helper-164 M1, where it was "already used").
    const again = (await retry()).body.result;
    expect(again.resultType).toBe('input_required');
    expect(again.requestState).not.toBe(ticket);
    expect(await exists('services', svc.id)).toBe(true);
    expect(await exists('volumes', svc.vol)).toBe(true);
    return afresh.inputRequests.confirm_delete.params.message as string;
  }

  it('the question names its rows: a service or volume deleted and created again under its id is asked about afresh', async () => {
    const args = { serviceId: svc.id, name: svc.name };
    const [a, b] = [await askDelete(), await askDelete()];
    const before = a.inputRequests.confirm_delete.params.message as string;
    expect(before).toMatch(
      /Checked again before it runs: it is service record \d+ with volume record \d+\.$/,
    );
    const done = await callTool(url, TOKEN, 'delete_service', args, {
      inputResponses: typed(svc.name, true),
      requestState: a.requestState,
    });
    expect(done.body.result.isError).toBe(false);
    // The same id, name, size and everything else, with new data: not the service confirmed.
    await insertTestService();
    const after = await askedAfresh(b.requestState);
    // The same question but for its numbers, under the notice that it changed.
    expect(after).toMatch(/^What you were asked about has changed/);
    expect(after.replace(/record \d+/g, '').endsWith(before.replace(/record \d+/g, ''))).toBe(true);
    expect(after.endsWith(before)).toBe(false);

    // Only the volume this time: the service stays, its volume is destroyed and made again, with
    // a smaller number than its sibling's (a transaction that took it first and committed last).
    await db.query(
      "INSERT INTO volumes (id, service_id, size_gb, team_id) VALUES ($1, $2, 2, 'platform')",
      [`${svc.vol}b`, svc.id],
    );
    const c = await askDelete();
    await db.query('DELETE FROM volumes WHERE id = $1', [svc.vol]);
    await db.query(
      "INSERT INTO volumes (id, service_id, size_gb, team_id, incarnation) VALUES ($1, $2, 48, 'platform', 1)",
      [svc.vol, svc.id],
    );
    expect(await askedAfresh(c.requestState)).toMatch(/volume records 1, \d+\.$/);
  });

  it('a volume destroyed and created again under its id is asked about afresh', async () => {
    const ask = async () =>
      (await callTool(url, TOKEN, 'delete_volume', { volumeId: svc.vol })).body.result;
    const [a, b] = [await ask(), await ask()];
    expect(a.inputRequests.confirm_volume.params.message).toMatch(
      /Checked again before it runs: it is volume record \d+\.$/,
    );
    const answer = (requestState: string) =>
      callTool(
        url,
        TOKEN,
        'delete_volume',
        { volumeId: svc.vol },
        {
          inputResponses: { confirm_volume: { action: 'accept', content: { volumeId: svc.vol } } },
          requestState,
        },
      );
    expect((await answer(a.requestState)).body.result.isError).toBe(false);
    await db.query(
      "INSERT INTO volumes (id, service_id, size_gb, team_id) VALUES ($1, $2, 48, 'platform')",
      [svc.vol, svc.id],
    );
    const stale = (await answer(b.requestState)).body.result;
    expect(stale.resultType).toBe('input_required');
    expect(stale.requestState).not.toBe(b.requestState);
    expect(await exists('volumes', svc.vol)).toBe(true);
  });

  it('a ticket for a staging service cannot delete another service', async () => {
    const first = await askDelete();
    const r = await callTool(
      url,
      TOKEN,
      'delete_service',
      { serviceId: 'svc_8f21c', name: 'api-prod' },
      {
        inputResponses: typed('api-prod'),
        requestState: first.requestState,
      },
    );
    expect(r.body.error.code).toBe(-32602);
    expect(await exists('services', 'svc_8f21c')).toBe(true);
  });
});

describe('the declared policy', () => {
  it('delete_service and delete_volume refuse clients without form elicitation (-32021)', async () => {
    for (const [name, args] of [
      ['delete_service', { serviceId: svc.id, name: svc.name }],
      ['delete_volume', { volumeId: svc.vol }],
    ] as const) {
      const r = await callTool(url, TOKEN, name, args, {
        capabilities: { elicitation: { url: {} } },
      });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { elicitation: { form: {} } } },
      });
    }
    expect(await exists('services', svc.id)).toBe(true);
    expect(await exists('volumes', svc.vol)).toBe(true);
  });

  it('scale_to_zero without elicitation takes the weaker argument confirmation and says so', async () => {
    const refused = await callTool(
      url,
      TOKEN,
      'scale_to_zero',
      { serviceId: svc.id },
      { capabilities: {} },
    );
    expect(refused.body.result).toMatchObject({ isError: true });
    expect(refused.body.result.content[0].text).not.toMatch(/given is not the name/);
    expect(await instances(svc.id)).toBe(3);
    const wrongName = await callTool(
      url,
      TOKEN,
      'scale_to_zero',
      { serviceId: svc.id, confirm: 'other' },
      { capabilities: {} },
    );
    expect(wrongName.body.result.isError).toBe(true);
    // Told that the name given did not match, not only how to confirm.
    expect(wrongName.body.result.content[0].text).toContain(
      `The confirm given is not the name of ${svc.id}.`,
    );
    expect(await instances(svc.id)).toBe(3);
    const ok = await callTool(
      url,
      TOKEN,
      'scale_to_zero',
      { serviceId: svc.id, confirm: svc.name },
      { capabilities: {} },
    );
    expect(ok.body.result.isError).toBe(false);
    expect(ok.body.result.content[0].text).toMatch(/not by a person/);
    expect(ok.body.result.structuredContent.confirmedBy).toBe('argument');
    expect(await instances(svc.id)).toBe(0);
  });

  it('scale_to_zero with elicitation asks a person', async () => {
    const first = await callTool(url, TOKEN, 'scale_to_zero', {
      serviceId: svc.id,
      confirm: svc.name,
    });
    expect(first.body.result.resultType).toBe('input_required');
    expect(await instances(svc.id)).toBe(3);
    const r = await callTool(
      url,
      TOKEN,
      'scale_to_zero',
      { serviceId: svc.id, confirm: svc.name },
      {
        inputResponses: { confirm_scale: { action: 'accept', content: { confirm: true } } },
        requestState: first.body.result.requestState,
      },
    );
    expect(r.body.result.structuredContent.confirmedBy).toBe('person');
    expect(await instances(svc.id)).toBe(0);
  });

  it('trigger_deploy is not gated, even for a client that cannot elicit', async () => {
    const r = await callTool(
      url,
      TOKEN,
      'trigger_deploy',
      { serviceId: svc.id, ref: 'main' },
      { capabilities: {} },
    );
    expect(r.body.result).toMatchObject({ resultType: 'complete', isError: false });
    const { rows } = await db.query('SELECT ref, requested_by FROM deploys WHERE service_id = $1', [
      svc.id,
    ]);
    expect(rows).toEqual([{ ref: 'main', requested_by: 'ops' }]);
  });

  it('delete_volume asks for the typed volume id and destroys only after it matches', async () => {
    const first = await callTool(url, TOKEN, 'delete_volume', { volumeId: svc.vol });
    const q = first.body.result.inputRequests.confirm_volume.params;
    expect(q.message).toContain('48 GB');
    const wrong = await callTool(
      url,
      TOKEN,
      'delete_volume',
      { volumeId: svc.vol },
      {
        inputResponses: {
          confirm_volume: { action: 'accept', content: { volumeId: 'vol_other' } },
        },
        requestState: first.body.result.requestState,
      },
    );
    expect(wrong.body.result.resultType).toBe('input_required');
    expect(await exists('volumes', svc.vol)).toBe(true);
    const right = await callTool(
      url,
      TOKEN,
      'delete_volume',
      { volumeId: svc.vol },
      {
        inputResponses: { confirm_volume: { action: 'accept', content: { volumeId: svc.vol } } },
        requestState: first.body.result.requestState,
      },
    );
    expect(right.body.result.isError).toBe(false);
    expect(await exists('volumes', svc.vol)).toBe(false);
  });

  it('lists the six tools, gated ones marked destructive', async () => {
    const r = await rpc(url, TOKEN, 'tools/list');
    const tools = r.body.result.tools as {
      name: string;
      annotations?: { destructiveHint?: boolean };
    }[];
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'create_service',
        'delete_service',
        'delete_volume',
        'list_services',
        'scale_to_zero',
        'trigger_deploy',
      ].sort(),
    );
    for (const name of ['delete_service', 'delete_volume', 'scale_to_zero']) {
      expect(tools.find((t) => t.name === name)?.annotations?.destructiveHint).toBe(true);
    }
  });
});

describe('a new database', () => {
  it('is seeded with svc_8f21c api-prod (3 instances, api.example.com, vol_31ab 48 GB) and a staging service', async () => {
    const r = await callTool(url, TOKEN, 'list_services', {});
    const services = r.body.result.structuredContent.services as Record<string, unknown>[];
    expect(services.find((s) => s.id === 'svc_8f21c')).toMatchObject({
      name: 'api-prod',
      instances: 3,
      dnsRecords: ['api.example.com'],
      volumes: [{ id: 'vol_31ab', sizeGb: 48 }],
    });
    expect(services.some((s) => s.environment === 'staging')).toBe(true);
  });
});

describe('describeDeletion', () => {
  it('says what is removed, and that volumes are kept unless destroying them is chosen too', () => {
    expect(describeDeletion({ instances: 1, dnsRecords: [], volumes: [] })).toBe(
      'This removes 1 running instance.',
    );
    expect(
      describeDeletion({
        instances: 0,
        dnsRecords: [],
        volumes: [{ id: 'vol_1', sizeGb: 5 }],
      } as never),
    ).toBe(
      'This removes the service (it runs no instances and has no DNS records). Its volume (vol_1 5 GB) is kept unless you also choose to destroy it.',
    );
    expect(
      describeDeletion({
        instances: 2,
        dnsRecords: ['a.example.com'],
        volumes: [
          { id: 'vol_1', sizeGb: 10 },
          { id: 'vol_2', sizeGb: 5 },
        ],
      } as never),
    ).toBe(
      'This removes 2 running instances and the DNS record a.example.com. Its 2 volumes (vol_1 10 GB, vol_2 5 GB; 15 GB in all) are kept unless you also choose to destroy them.',
    );
  });
});
