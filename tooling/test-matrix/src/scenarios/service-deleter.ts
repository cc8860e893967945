/**
 * The scenarios of `apps/service-deleter`: `delete_service {serviceId, name}`
 * states the blast radius and asks the person to type the service name
 * (`serviceName`) and whether to destroy the volumes (`deleteVolumes`).
 */
import { randomBytes } from 'node:crypto';
import type { Database } from '@mrtr/example-kit';
import { expect } from 'vitest';
import { DEFAULT_TEAM, insertService } from '../../../../apps/service-deleter/src/services.js';
import type { RunningCombination } from '../combination.js';
import { withOfficialClient } from '../official-client.js';
import {
  asked,
  call,
  completed,
  failed,
  INVALID_PARAMS,
  MISSING_CAPABILITY,
  type Reply,
  tamper,
  textOf,
  WITHOUT_FORM,
} from '../wire.js';
import {
  atOffset,
  EXPIRED_OFFSET_MS,
  REBINDING,
  refusesLegacyClient,
  USED_OR_IN_PROGRESS,
} from './common.js';
import type { Scenario } from './types.js';

const TOOL = 'delete_service';
const KEY = 'confirm_delete';

/** A service of the matrix: 3 instances, one DNS record, one 48 GB volume. */
interface Svc {
  id: string;
  name: string;
  host: string;
  vol: string;
}

async function seed(db: Database): Promise<Svc> {
  const tag = randomBytes(5).toString('hex');
  const svc = {
    id: `svc_m${tag}`,
    name: `web-${tag}`,
    host: `${tag}.example.com`,
    vol: `vol_m${tag}`,
  };
  // Services belong to a team. Behind Express or Hono the app has no tokens, so no principal was
  // made a member at start: alice joins the default team here, as an operator would add her.
  await db.query(
    'INSERT INTO team_members (team_id, principal) VALUES ($1, $2) ON CONFLICT DO NOTHING',
    [DEFAULT_TEAM, 'alice'],
  );
  await db.transaction((tx) =>
    insertService(tx, {
      id: svc.id,
      name: svc.name,
      environment: 'production',
      instances: 3,
      dnsRecords: [svc.host],
      volumes: [{ id: svc.vol, sizeGb: 48 }],
    }),
  );
  return svc;
}

/** What the database holds of `svc`: its row, its DNS records, and its volume (and what it is attached to). */
async function state(db: Database, svc: Svc) {
  const service = await db.query<{ name: string; instances: number }>(
    'SELECT name, instances FROM services WHERE id = $1',
    [svc.id],
  );
  const dns = await db.query<{ hostname: string }>(
    'SELECT hostname FROM dns_records WHERE service_id = $1',
    [svc.id],
  );
  const volume = await db.query<{ service_id: string | null; size_gb: number }>(
    'SELECT service_id, size_gb FROM volumes WHERE id = $1',
    [svc.vol],
  );
  const v = volume.rows[0];
  return {
    service: service.rows[0]
      ? { ...service.rows[0], instances: Number(service.rows[0].instances) }
      : null,
    dns: dns.rows.map((r) => r.hostname),
    volume: v ? { attachedTo: v.service_id, sizeGb: Number(v.size_gb) } : null,
  };
}

const untouched = (svc: Svc) => ({
  service: { name: svc.name, instances: 3 },
  dns: [svc.host],
  volume: { attachedTo: svc.id, sizeGb: 48 },
});
/** Deleted with its DNS record; the volume retained (detached) or destroyed. */
const deleted = (volumeKept: boolean) => ({
  service: null,
  dns: [],
  volume: volumeKept ? { attachedTo: null, sizeGb: 48 } : null,
});

const args = (svc: Svc) => ({ serviceId: svc.id, name: svc.name });
const typed = (serviceName: string, deleteVolumes = false) => ({
  [KEY]: { action: 'accept', content: { serviceName, deleteVolumes } },
});

/** Round 1 on instance A as alice: the ticket; the form states the blast radius. */
async function ask(h: RunningCombination, svc: Svc) {
  const q = asked(await call(h.urls[0], h.principals.alice.token, TOOL, args(svc)), KEY);
  expect(q.form.message).toContain('3 running instances');
  expect(q.form.message).toContain(svc.host);
  expect(q.form.message).toContain(`${svc.vol} 48 GB`);
  expect(q.form.requestedSchema.required).toEqual(['serviceName']);
  return q.requestState;
}

/** Round 2 on instance B (or `url`) as alice. */
const answer = (
  h: RunningCombination,
  svc: Svc,
  requestState: string,
  inputResponses?: Record<string, unknown>,
  url = h.urls[1],
) =>
  call(url, h.principals.alice.token, TOOL, args(svc), {
    requestState,
    ...(inputResponses ? { inputResponses } : {}),
  });

/** A complete result that deleted `svc`, destroying its volume or not. */
function deletes(reply: Reply, svc: Svc, volumeDestroyed: boolean) {
  const result = completed(reply);
  expect(result.structuredContent).toMatchObject({
    deleted: { id: svc.id, name: svc.name, instances: 3, dnsRecords: [svc.host] },
    retained: { volumes: volumeDestroyed ? [] : [{ id: svc.vol, sizeGb: 48 }] },
  });
  return result;
}

export const SERVICE_DELETER_SCENARIOS: Scenario[] = [
  {
    id: 'happy',
    async run(h) {
      const svc = await seed(h.db);
      const ticket = await ask(h, svc);
      expect(await state(h.db, svc)).toEqual(untouched(svc)); // round 1 deletes nothing
      deletes(await answer(h, svc, ticket, typed(svc.name)), svc, false);
      expect(await state(h.db, svc)).toEqual(deleted(true));
    },
  },
  {
    id: 'decline',
    async run(h) {
      const svc = await seed(h.db);
      const ticket = await ask(h, svc);
      const declined = completed(await answer(h, svc, ticket, { [KEY]: { action: 'decline' } }));
      expect(textOf(declined)).toMatch(/declined/);
      expect(await state(h.db, svc)).toEqual(untouched(svc));
      const late = completed(await answer(h, svc, ticket, typed(svc.name)), true);
      expect(textOf(late)).toMatch(/already used/);
      expect(await state(h.db, svc)).toEqual(untouched(svc));
    },
  },
  {
    id: 'cancel',
    async run(h) {
      const svc = await seed(h.db);
      const ticket = await ask(h, svc);
      completed(await answer(h, svc, ticket, { [KEY]: { action: 'cancel' } }));
      expect(await state(h.db, svc)).toEqual(untouched(svc));
      deletes(await answer(h, svc, ticket, typed(svc.name, true), h.urls[0]), svc, true);
      expect(await state(h.db, svc)).toEqual(deleted(false));
    },
  },
  {
    id: 'missing',
    async run(h) {
      const svc = await seed(h.db);
      const ticket = await ask(h, svc);
      for (const inputResponses of [undefined, {}, { [KEY]: { action: 'accept', content: {} } }]) {
        const again = asked(await answer(h, svc, ticket, inputResponses), KEY);
        expect(again.requestState).toBe(ticket);
        expect(again.form.message).toMatch(/answer/i);
        expect(await state(h.db, svc)).toEqual(untouched(svc));
      }
      deletes(await answer(h, svc, ticket, typed(svc.name)), svc, false);
      expect(await state(h.db, svc)).toEqual(deleted(true));
    },
  },
  {
    id: 'tampered',
    async run(h) {
      const svc = await seed(h.db);
      const ticket = await ask(h, svc);
      failed(await answer(h, svc, tamper(ticket), typed(svc.name)), INVALID_PARAMS);
      expect(await state(h.db, svc)).toEqual(untouched(svc));
    },
  },
  {
    id: 'arguments',
    async run(h) {
      const svc = await seed(h.db);
      const other = await seed(h.db);
      const ticket = await ask(h, svc);
      // The ticket for one service, presented to delete another, with that one's name typed.
      const reply = await call(h.urls[1], h.principals.alice.token, TOOL, args(other), {
        requestState: ticket,
        inputResponses: typed(other.name),
      });
      expect(failed(reply, INVALID_PARAMS).message).toMatch(/requestState rejected/);
      expect(await state(h.db, svc)).toEqual(untouched(svc));
      expect(await state(h.db, other)).toEqual(untouched(other));
    },
  },
  {
    id: 'principal',
    async run(h) {
      const svc = await seed(h.db);
      const ticket = await ask(h, svc);
      const reply = await call(h.urls[1], h.principals.bob.token, TOOL, args(svc), {
        requestState: ticket,
        inputResponses: typed(svc.name),
      });
      expect(failed(reply, INVALID_PARAMS).message).toMatch(/another caller/);
      expect(await state(h.db, svc)).toEqual(untouched(svc));
    },
  },
  {
    id: 'expired',
    async run(h) {
      const svc = await seed(h.db);
      const ticket = await atOffset(h, -EXPIRED_OFFSET_MS, () => ask(h, svc));
      expect(failed(await answer(h, svc, ticket, typed(svc.name)), INVALID_PARAMS).message).toMatch(
        /expired/,
      );
      expect(await state(h.db, svc)).toEqual(untouched(svc));
    },
  },
  {
    id: 'outside',
    na: 'delete_service offers no choices: its target is in the arguments, bound by their digest (see "arg")',
  },
  {
    id: 'mismatch',
    async run(h) {
      const svc = await seed(h.db);
      const ticket = await ask(h, svc);
      for (const wrong of [`${svc.name}x`, svc.name.toUpperCase(), 'api-prod']) {
        const again = asked(await answer(h, svc, ticket, typed(wrong, true)), KEY);
        expect(again.requestState).toBe(ticket);
        expect(again.form.message).toMatch(/did not match/);
        expect(await state(h.db, svc)).toEqual(untouched(svc));
      }
      deletes(await answer(h, svc, ticket, typed(svc.name)), svc, false);
      expect(await state(h.db, svc)).toEqual(deleted(true));
    },
  },
  {
    id: 'reissue',
    async run(h) {
      const svc = await seed(h.db);
      const ticket = await ask(h, svc);
      const first = await answer(h, svc, ticket, typed(svc.name));
      deletes(first, svc, false);
      for (const url of h.urls) {
        expect((await answer(h, svc, ticket, typed(svc.name), url)).result).toEqual(first.result);
      }
      // The used ticket asking to destroy the volume too: refused, and the volume stays.
      const more = completed(await answer(h, svc, ticket, typed(svc.name, true)), true);
      expect(textOf(more)).toMatch(/already used/);
      expect(await state(h.db, svc)).toEqual(deleted(true));
    },
  },
  {
    id: 'concurrent',
    async run(h) {
      const svc = await seed(h.db);
      const ticket = await ask(h, svc);
      // 20 presentations at once on both instances, half of them asking to destroy the volume.
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          answer(h, svc, ticket, typed(svc.name, Math.floor(i / 2) % 2 === 1), h.urls[i % 2]),
        ),
      );
      const performed = replies.filter(
        (r) => r.result?.resultType === 'complete' && !r.result.isError,
      );
      expect(performed.length).toBeGreaterThan(0);
      const outcome = completed(performed[0] as Reply).structuredContent as {
        retained: { volumes: unknown[] };
      };
      const destroyed = outcome.retained.volumes.length === 0;
      for (const reply of performed) {
        deletes(reply, svc, destroyed);
        expect(reply.result).toEqual(performed[0]?.result);
      }
      for (const reply of replies.filter((r) => !performed.includes(r))) {
        expect(textOf(completed(reply, true))).toMatch(USED_OR_IN_PROGRESS);
      }
      // The one outcome reported is the one in the database.
      expect(await state(h.db, svc)).toEqual(deleted(!destroyed));
    },
  },
  {
    id: 'capabilities',
    async run(h) {
      const svc = await seed(h.db);
      const alice = h.principals.alice.token;
      for (const { capabilities } of WITHOUT_FORM) {
        const error = failed(
          await call(h.urls[0], alice, TOOL, args(svc), { capabilities }),
          MISSING_CAPABILITY,
        );
        expect(error.data?.requiredCapabilities).toEqual({ elicitation: { form: {} } });
      }
      const ticket = await ask(h, svc);
      const round2 = await call(h.urls[1], alice, TOOL, args(svc), {
        requestState: ticket,
        inputResponses: typed(svc.name),
        capabilities: {},
      });
      failed(round2, MISSING_CAPABILITY);
      expect(await state(h.db, svc)).toEqual(untouched(svc));
      deletes(await answer(h, svc, ticket, typed(svc.name)), svc, false);
      expect(await state(h.db, svc)).toEqual(deleted(true));
    },
  },
  {
    id: 'official',
    async run(h) {
      const svc = await seed(h.db);
      const shown: string[] = [];
      const { value: result, wire } = await withOfficialClient(
        h.urls[0],
        h.principals.alice.token,
        ({ message }) => {
          shown.push(message);
          // The person reads the name in the question (in quotes, its own quotes escaped) and
          // types it; the volume is kept.
          const quotedName = /^Delete "((?:[^"\\]|\\.)*)" \(/.exec(message)?.[1] ?? '';
          const name = quotedName.replace(/\\(.)/g, '$1');
          return { action: 'accept', content: { serviceName: name, deleteVolumes: false } };
        },
        (client) => client.callTool({ name: TOOL, arguments: args(svc) }),
      );
      expect(wire.violations).toEqual([]);
      expect(wire.methods.filter((m) => m === 'tools/call')).toHaveLength(2);
      // Every request sent and every response received was checked against schema.json.
      expect(wire.checked).toBe(2 * wire.methods.length);
      expect(shown).toHaveLength(1);
      expect(shown[0]).toContain(`${svc.vol} 48 GB`);
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({
        deleted: { id: svc.id, name: svc.name },
        retained: { volumes: [{ id: svc.vol, sizeGb: 48 }] },
      });
      expect(await state(h.db, svc)).toEqual(deleted(true));
    },
  },
  {
    id: 'legacy',
    async run(h) {
      // The service deleter has no SDK entry point: only our 2026-07-28 endpoint serves it.
      const svc = await seed(h.db);
      const shown: string[] = [];
      await refusesLegacyClient(h, ({ message }) => {
        shown.push(message);
        return { action: 'accept', content: { serviceName: svc.name, deleteVolumes: true } };
      });
      expect(shown).toEqual([]);
      expect(await state(h.db, svc)).toEqual(untouched(svc));
    },
  },
  REBINDING,
];
