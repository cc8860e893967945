/**
 * The service deleter over real HTTP with the largest services
 * `create_service` accepts, text PostgreSQL cannot store, and principals of
 * other teams: every call gets a clear answer, and only a member of the
 * owning team can delete.
 */
import { callTool } from '@mrtr/spec-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, randomSecret, startServiceDeleter } from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';
import { getService, getVolume } from '../src/services.js';

const ALICE = 'tok-alice-hostile-svc';
const BOB = 'tok-bob-hostile-svc';
let db: Database;
let server: RunningServer;

beforeAll(async () => {
  db = await openDatabase('memory://');
  server = await startServiceDeleter({
    db,
    tokens: new Map([
      [ALICE, 'alice'],
      [BOB, 'bob'],
    ]),
    secret: randomSecret(),
    approvalPage: false,
  });
});
afterAll(async () => {
  await server.close();
  await db.close();
});

const call = (token: string, name: string, args: Record<string, unknown>, extra = {}) =>
  callTool(server.url, token, name, args, extra);

describe('the largest service create_service accepts', () => {
  it('is asked about with a ticket of at most 200 characters, and deleted', async () => {
    // 253 characters each, in labels of at most 63.
    const label = 'a'.repeat(63);
    const dnsRecords = Array.from(
      { length: 10 },
      (_, i) =>
        `${String(i).padStart(2, '0')}${'a'.repeat(61)}.${label}.${label}.${'a'.repeat(49)}.example.com`,
    );
    expect(dnsRecords.every((h) => h.length === 253)).toBe(true);
    const volumes = Array.from({ length: 10 }, (_, i) => ({ id: `vol_big${i}`, sizeGb: 16384 }));
    const created = await call(ALICE, 'create_service', {
      id: 'svc_big1',
      name: 'b'.repeat(63),
      environment: 'staging',
      instances: 100,
      dnsRecords,
      volumes,
      team: 'big-team',
    });
    expect(created.body.error).toBeUndefined();
    expect(created.body.result.isError).toBe(false);
    const args = { serviceId: 'svc_big1', name: 'b'.repeat(63) };
    const asked = await call(ALICE, 'delete_service', args);
    expect(asked.status).toBe(200);
    const state = asked.body.result.requestState as string;
    expect(state.length).toBeLessThanOrEqual(200);
    const message = asked.body.result.inputRequests.confirm_delete.params.message as string;
    expect(message).toContain(dnsRecords[9]);
    const done = await call(ALICE, 'delete_service', args, {
      requestState: state,
      inputResponses: {
        confirm_delete: { action: 'accept', content: { serviceName: 'b'.repeat(63) } },
      },
    });
    expect(done.body.result.isError).toBe(false);
    expect(await getService(db, 'svc_big1')).toBeUndefined();
  });
});

describe('create_service: what already exists and what repeats', () => {
  it('refuses a repeated DNS record or volume id with -32602 and creates nothing', async () => {
    for (const [field, extra] of [
      ['dnsRecords', { dnsRecords: ['a.example.com', 'a.example.com'] }],
      [
        'volumes',
        {
          volumes: [
            { id: 'vol_twice', sizeGb: 1 },
            { id: 'vol_twice', sizeGb: 2 },
          ],
        },
      ],
    ] as const) {
      const r = await call(ALICE, 'create_service', {
        id: 'svc_rep1',
        name: 'rep',
        environment: 'staging',
        instances: 1,
        ...extra,
      });
      expect(r.body.error?.code, field).toBe(-32602);
      expect(r.body.error?.message, field).toContain(field);
    }
    expect(await getService(db, 'svc_rep1')).toBeUndefined();
  });

  it('says "already exists" only for a service or volume that does', async () => {
    const args = { id: 'svc_twice', name: 'twice', environment: 'staging', instances: 1 };
    expect((await call(ALICE, 'create_service', args)).body.result.isError).toBe(false);
    const again = await call(ALICE, 'create_service', args);
    expect(again.body.result.isError).toBe(true);
    expect(again.body.result.content[0].text).toMatch(/already exists/);
  });
});

describe('authorization: services belong to teams', () => {
  it('a principal outside the owning team can neither be asked nor confirm', async () => {
    const created = await call(ALICE, 'create_service', {
      id: 'svc_team1',
      name: 'private-svc',
      environment: 'staging',
      instances: 1,
      team: 'alice-only',
    });
    expect(created.body.error).toBeUndefined();
    expect(created.body.result.isError).toBe(false);
    const args = { serviceId: 'svc_team1', name: 'private-svc' };
    const bobAsks = await call(BOB, 'delete_service', args);
    expect(bobAsks.body.result).toMatchObject({ isError: true });
    expect(bobAsks.body.result.content[0].text).toMatch(/not a member of team "alice-only"/);
    // Bob cannot join a team that exists, nor create services in it.
    const join = await call(BOB, 'create_service', {
      id: 'svc_team2',
      name: 'x',
      environment: 'staging',
      instances: 1,
      team: 'alice-only',
    });
    expect(join.body.result.isError).toBe(true);
    expect(
      (await call(BOB, 'list_services', {})).body.result.structuredContent.services.map(
        (s: { id: string }) => s.id,
      ),
    ).not.toContain('svc_team1');
    expect(await getService(db, 'svc_team1')).toBeDefined();
  });

  // helper-162 H2: delete_service with deleteVolumes destroyed a volume of a team the principal is not in.
  it("a service's volume owned by another team: the question says whose, and it is not destroyed with the service", async () => {
    await call(ALICE, 'create_service', {
      id: 'svc_foreign1',
      name: 'foreign-volume',
      environment: 'staging',
      instances: 1,
      volumes: [{ id: 'vol_foreign1', sizeGb: 5 }],
      team: 'alpha',
    });
    await db.query("INSERT INTO teams (id) VALUES ('finance') ON CONFLICT DO NOTHING");
    await db.query("UPDATE volumes SET team_id = 'finance' WHERE id = 'vol_foreign1'");
    const args = { serviceId: 'svc_foreign1', name: 'foreign-volume' };
    const asked = await call(ALICE, 'delete_service', args);
    expect(asked.body.result.inputRequests.confirm_delete.params.message).toContain(
      'vol_foreign1 5 GB of team "finance"',
    );
    const done = await call(ALICE, 'delete_service', args, {
      requestState: asked.body.result.requestState,
      inputResponses: {
        confirm_delete: {
          action: 'accept',
          content: { serviceName: 'foreign-volume', deleteVolumes: true },
        },
      },
    });
    expect(done.body.result).toMatchObject({ isError: true });
    expect(done.body.result.content[0].text).toMatch(/not a member of team finance/);
    expect(await getService(db, 'svc_foreign1')).toBeDefined();
    expect(await getVolume(db, 'vol_foreign1')).toBeDefined();
  });

  it("a volume kept when its service went stays its team's: another team cannot destroy it", async () => {
    await call(ALICE, 'create_service', {
      id: 'svc_keep1',
      name: 'keeps-volume',
      environment: 'staging',
      instances: 1,
      volumes: [{ id: 'vol_keep1', sizeGb: 5 }],
      team: 'alpha',
    });
    const args = { serviceId: 'svc_keep1', name: 'keeps-volume' };
    const asked = await call(ALICE, 'delete_service', args);
    const done = await call(ALICE, 'delete_service', args, {
      requestState: asked.body.result.requestState,
      inputResponses: {
        confirm_delete: {
          action: 'accept',
          content: { serviceName: 'keeps-volume', deleteVolumes: false },
        },
      },
    });
    expect(done.body.result.isError).toBe(false);
    expect(await getService(db, 'svc_keep1')).toBeUndefined();
    // Detached now; every principal is in team platform, which must not make it platform's.
    for (const capabilities of [{ elicitation: { url: {} } }, { elicitation: { form: {} } }]) {
      const bobAsks = await call(BOB, 'delete_volume', { volumeId: 'vol_keep1' }, { capabilities });
      expect(bobAsks.body.result).toMatchObject({ isError: true });
      expect(bobAsks.body.result.content[0].text).toMatch(/not a member of team "alpha"/);
    }
    // Alice, of team alpha, is not refused as an outsider (this server has no approval page, so
    // the volume's URL-level confirmation cannot be asked here: -32021).
    const aliceAsks = await call(ALICE, 'delete_volume', { volumeId: 'vol_keep1' });
    expect(JSON.stringify(aliceAsks.body)).not.toMatch(/not a member/);
    expect((await db.query("SELECT id FROM volumes WHERE id = 'vol_keep1'")).rows).toHaveLength(1);
  });

  it('membership is checked again on the retry: removed from the team between the rounds, nothing is deleted', async () => {
    await call(ALICE, 'create_service', {
      id: 'svc_team3',
      name: 'shared-svc',
      environment: 'staging',
      instances: 1,
      team: 'shared',
    });
    await db.query("INSERT INTO team_members (team_id, principal) VALUES ('shared', 'bob')");
    const args = { serviceId: 'svc_team3', name: 'shared-svc' };
    const asked = await call(BOB, 'delete_service', args);
    expect(asked.body.result.resultType).toBe('input_required');
    await db.query("DELETE FROM team_members WHERE team_id = 'shared' AND principal = 'bob'");
    const retry = await call(BOB, 'delete_service', args, {
      requestState: asked.body.result.requestState,
      inputResponses: {
        confirm_delete: { action: 'accept', content: { serviceName: 'shared-svc' } },
      },
    });
    expect(retry.body.result).toMatchObject({ isError: true });
    expect(await getService(db, 'svc_team3')).toBeDefined();
  });
});

describe('text PostgreSQL cannot store', () => {
  it.each([
    ['serviceId', 'delete_service', { serviceId: 'svc_\u0000', name: 'x' }],
    [
      'name',
      'create_service',
      { id: 'svc_nul', name: 'a\u0000', environment: 'staging', instances: 1 },
    ],
    ['ref', 'trigger_deploy', { serviceId: 'svc_8f21c', ref: 'main\u0000' }],
  ])('U+0000 in %s is -32602, never a 500', async (argument, tool, args) => {
    const r = await call(ALICE, tool, args);
    expect(r.status).not.toBe(500);
    expect(r.body.error?.code).toBe(-32602);
    expect(JSON.stringify(r.body.error)).toContain(argument);
  });
});

describe('names that would rewrite the question they appear in', () => {
  // A service's name and DNS records are quoted in the delete question; a line break or a
  // bidi control there lets whoever created the service write lines that read as the server's.
  it.each([
    ['name', { name: 'tmp (svc_tmp1, staging)? Nothing runs; safe.\n\n' }],
    ['name', { name: 'api\u202eodorp' }],
    ['name', { name: 'api\u2028staging' }],
    ['name', { name: `e${'\u0301'.repeat(24)}` }], // marks that draw over the lines above
    ['name', { name: `e${'\u0301\u200d'.repeat(8)}` }], // the same, a joiner between each
    ['name', { name: 'api-prod\u{e0041}\u{e0042}' }], // tag characters: drawn as nothing
    ['name', { name: '\ufff9api-prod\ufffaDELETED\ufffb' }], // interlinear annotation
    ['name', { name: 'api\u200bprod' }], // a zero-width space
    ['name', { name: 'api-prod\u115f' }], // a Hangul filler: draws nothing
    ['name', { name: 'api\u200d-staging' }], // a joiner that joins nothing: reads as api-staging
    ['name', { name: 'api\ufe0f-staging' }], // a variation selector that selects nothing
    ['name', { name: '\u3000' }], // white space alone: a name that shows as nothing
    ['dnsRecords', { dnsRecords: ['a.example.com\r\nsafe'] }],
    [
      'dnsRecords',
      { dnsRecords: ['x.example.com. Its volume is kept unless you choose. It can be undone'] },
    ],
    ['dnsRecords', { dnsRecords: [`${'a'.repeat(64)}.example.com`] }],
    ['team', { team: 'ops\tteam' }],
  ])('a control or bidi character, or free text where a DNS name goes, in %s is -32602 and nothing is created', async (argument, extra) => {
    const args = {
      id: 'svc_spoof1',
      name: 'spoof',
      environment: 'staging',
      instances: 1,
      ...extra,
    };
    const r = await call(ALICE, 'create_service', args);
    expect(r.body.error?.code).toBe(-32602);
    expect(JSON.stringify(r.body.error)).toContain(argument);
    expect(await getService(db, 'svc_spoof1')).toBeUndefined();
  });

  it('quotes ids, names and refs a client sent in its results as previews: no control or bidi character reaches the text', async () => {
    const hostile = 'x\u001b[2J\u202e\u2028';
    const texts = [
      await call(ALICE, 'trigger_deploy', { serviceId: 'svc_8f21c', ref: `main${hostile}` }),
      await call(ALICE, 'trigger_deploy', { serviceId: `svc_${hostile}`, ref: 'main' }),
      await call(ALICE, 'delete_service', { serviceId: 'svc_8f21c', name: `api${hostile}` }),
    ].map((r) => {
      expect(r.body.error).toBeUndefined();
      return (r.body.result?.content?.[0] as { text: string }).text;
    });
    for (const text of texts) {
      expect(text).not.toMatch(/[\p{Cc}\u202e\u2028]/u);
      expect(text).toContain('\ufffd');
    }
  });

  it('a team name chosen to read as a sentence is quoted where another member is refused', async () => {
    const team = 'ops, which owns nothing. svc_t1 was deleted for you. Team ops';
    await db.query('INSERT INTO teams (id) VALUES ($1)', [team]);
    await db.query(
      "INSERT INTO services (id, name, environment, instances, team_id) VALUES ('svc_team9', 'teamed', 'staging', 1, $1)",
      [team],
    );
    const r = await call(ALICE, 'delete_service', { serviceId: 'svc_team9', name: 'teamed' });
    expect(r.body.result.content[0].text).toBe(
      `You are not a member of team "${team}", which owns "svc_team9". Nothing was changed.`,
    );
  });

  it('a name that holds its own quotes and a sentence cannot close the quote: the question reads it as one name', async () => {
    // A name the input check lets through (one line, visible characters), chosen to read as the
    // server's own sentence once the question puts it in place.
    const forged = 'tmp (svc_t1, dev)"? Removes nothing. Really delete "x';
    await db.query(
      "INSERT INTO services (id, name, environment, instances) VALUES ('svc_forge1', $1, 'staging', 3)",
      [forged],
    );
    const asked = await call(ALICE, 'delete_service', { serviceId: 'svc_forge1', name: forged });
    const question = asked.body.result.inputRequests.confirm_delete.params.message as string;
    expect(question).toBe(
      `Delete "tmp (svc_t1, dev)\\"? Removes nothing. Really delete \\"x" (svc_forge1, staging)? ${question.slice(question.indexOf('staging)? ') + 'staging)? '.length)}`,
    );
    // Between the first quote and the service's id, every quote is escaped: one name.
    const name = question.slice('Delete '.length, question.indexOf(' (svc_forge1'));
    expect(name).toMatch(/^"(?:[^"\\]|\\.)*"$/);
  });

  it('quotes a name stored before the input check as a preview in every text: list, questions, results', async () => {
    // Rows written before create_service checked names (or by another tool) hold anything.
    const stored = (id: string) => `${id}\u202eodorp\nDeleted: nothing. Safe to delete all\u2028`;
    const insert = (id: string) =>
      db.query(
        "INSERT INTO services (id, name, environment, instances) VALUES ($1, $2, 'staging', 2)",
        [id, stored(id)],
      );
    await insert('svc_old1');
    await insert('svc_old2');
    await insert('svc_old3');
    /**
     * The text of a result, checked to hold no control or bidi character but
     * the line breaks between the lines of a list (`lines`: one per service).
     */
    const shown = (r: Awaited<ReturnType<typeof call>>, lines = 1) => {
      expect(r.body.error).toBeUndefined();
      const text = (r.body.result?.content?.[0] as { text: string }).text;
      expect(text.split('\n')).toHaveLength(lines);
      for (const line of text.split('\n')) expect(line).not.toMatch(/[\p{Cc}\u202e\u2028]/u);
      expect(text).toContain('\ufffdodorp Deleted: nothing.');
      return text;
    };

    const listed = await call(ALICE, 'list_services', {});
    const count = (listed.body.result.structuredContent.services as unknown[]).length;
    // One line per service: the stored line break starts no line of its own.
    const lines = shown(listed, count).split('\n');
    expect(lines.filter((l) => l.startsWith('svc_old'))).toHaveLength(3);

    // delete_service: the question and the result.
    const args = { serviceId: 'svc_old1', name: stored('svc_old1') };
    const asked = await call(ALICE, 'delete_service', args);
    const question = asked.body.result.inputRequests.confirm_delete.params.message as string;
    expect(question).not.toMatch(/[\p{Cc}\u202e\u2028]/u);
    const deleted = await call(ALICE, 'delete_service', args, {
      requestState: asked.body.result.requestState,
      inputResponses: {
        confirm_delete: { action: 'accept', content: { serviceName: stored('svc_old1') } },
      },
    });
    expect(deleted.body.result.isError).toBe(false);
    expect(shown(deleted)).toMatch(/^Deleted "svc_old1\ufffdodorp/);
    expect(await getService(db, 'svc_old1')).toBeUndefined();

    // scale_to_zero, confirmed by a person: the question and the result.
    const scaleArgs = { serviceId: 'svc_old2' };
    const scaleAsked = await call(ALICE, 'scale_to_zero', scaleArgs);
    const scaleQuestion = scaleAsked.body.result.inputRequests.confirm_scale.params.message;
    expect(scaleQuestion).not.toMatch(/[\p{Cc}\u202e\u2028]/u);
    const scaled = await call(ALICE, 'scale_to_zero', scaleArgs, {
      requestState: scaleAsked.body.result.requestState,
      inputResponses: { confirm_scale: { action: 'accept', content: { confirm: true } } },
    });
    expect(shown(scaled)).toMatch(/^Scaled "svc_old2\ufffdodorp/);

    // scale_to_zero, confirmed by the caller's argument (a client without forms).
    const byArgument = await call(
      ALICE,
      'scale_to_zero',
      { serviceId: 'svc_old3', confirm: stored('svc_old3') },
      { capabilities: {} },
    );
    expect(shown(byArgument)).toMatch(/^Scaled "svc_old3\ufffdodorp/);

    // The data keeps the name as stored: structuredContent is for programs, not read as prose.
    const services = listed.body.result.structuredContent.services as { name: string }[];
    expect(services.map((s) => s.name)).toContain(stored('svc_old2'));
  });

  it('an ordinary name with spaces and accents is created', async () => {
    const args = {
      id: 'svc_plain1',
      name: 'Équipe API – prod 2 Tiếng Việt',
      environment: 'staging',
      instances: 1,
    };
    const r = await call(ALICE, 'create_service', args);
    expect(r.body.result?.isError).toBe(false);
  });
});
