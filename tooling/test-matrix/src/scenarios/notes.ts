/**
 * The scenarios of `apps/notes-server`: `notes_delete {workspaceUri, title}`
 * asks which of the notes with that title to delete (`note_id`, one of the
 * signed candidates) and for a confirmation (`confirm`).
 */
import { randomBytes } from 'node:crypto';
import type { Database } from '@mrtr/example-kit';
import { fieldOptions } from '@mrtr/wire';
import { expect } from 'vitest';
import type { RunningCombination } from '../combination.js';
import { type Person, withOfficialClient } from '../official-client.js';
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

const TOOL = 'notes_delete';
const KEY = 'delete_choice';
const TITLE = 'Dup';

/** A new workspace with `members` and `count` notes titled "Dup"; its URI and note ids, sorted. */
async function seed(db: Database, members: string[] = ['alice'], count = 3) {
  const uri = `notes://matrix-${randomBytes(5).toString('hex')}`;
  await db.query('INSERT INTO workspaces (uri) VALUES ($1)', [uri]);
  for (const m of members) {
    await db.query('INSERT INTO workspace_members (workspace_uri, principal) VALUES ($1, $2)', [
      uri,
      m,
    ]);
  }
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `note-${randomBytes(5).toString('hex')}`;
    await db.query('INSERT INTO notes (id, workspace_uri, title, body) VALUES ($1, $2, $3, $4)', [
      id,
      uri,
      TITLE,
      `body ${i}`,
    ]);
    ids.push(id);
  }
  return { uri, ids: ids.sort() };
}

/** Ids of the notes left in `uri`, sorted. */
async function left(db: Database, uri: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM notes WHERE workspace_uri = $1 ORDER BY id',
    [uri],
  );
  return rows.map((r) => r.id);
}

const args = (uri: string) => ({ workspaceUri: uri, title: TITLE });
const accept = (noteId: string, confirm = true) => ({
  [KEY]: { action: 'accept', content: { note_id: noteId, confirm } },
});
const without = (ids: string[], id: string) => ids.filter((x) => x !== id);

/** Round 1 on instance A as alice: the ticket and the offered note ids, which must be exactly `ids`. */
async function ask(h: RunningCombination, uri: string, ids: string[]) {
  const q = asked(await call(h.urls[0], h.principals.alice.token, TOOL, args(uri)), KEY);
  const candidates = fieldOptions(q.form.requestedSchema.properties.note_id) ?? [];
  expect([...candidates].sort()).toEqual(ids);
  return { requestState: q.requestState, candidates, message: q.form.message };
}

/** Round 2 on instance B as alice. */
const answer = (
  h: RunningCombination,
  uri: string,
  requestState: string,
  inputResponses?: Record<string, unknown>,
  url = h.urls[1],
) =>
  call(url, h.principals.alice.token, TOOL, args(uri), {
    requestState,
    ...(inputResponses ? { inputResponses } : {}),
  });

/** The note deleted by a complete result, checked against the workspace. */
function deletedBy(reply: Reply, uri: string): string {
  const result = completed(reply);
  const deleted = (result.structuredContent as { deleted?: { id: string; workspaceUri: string } })
    ?.deleted;
  expect(deleted?.workspaceUri).toBe(uri);
  return deleted?.id as string;
}

export const NOTES_SCENARIOS: Scenario[] = [
  {
    id: 'happy',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const { requestState, candidates } = await ask(h, uri, ids);
      const chosen = candidates[1] as string;
      expect(await left(h.db, uri)).toEqual(ids); // round 1 deletes nothing
      expect(deletedBy(await answer(h, uri, requestState, accept(chosen)), uri)).toBe(chosen);
      expect(await left(h.db, uri)).toEqual(without(ids, chosen));
    },
  },
  {
    id: 'decline',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const { requestState, candidates } = await ask(h, uri, ids);
      const declined = completed(
        await answer(h, uri, requestState, { [KEY]: { action: 'decline' } }),
      );
      expect(declined.structuredContent).toBeUndefined();
      expect(textOf(declined)).toMatch(/declined/);
      expect(await left(h.db, uri)).toEqual(ids);
      // A decline uses the ticket up: accepting it afterwards deletes nothing.
      const late = completed(
        await answer(h, uri, requestState, accept(candidates[0] as string)),
        true,
      );
      expect(textOf(late)).toMatch(/already used/);
      // Nor is the spent ticket asked again, or answered as a cancel, on either instance: every
      // store tells the gate that the nonce is used.
      for (const url of h.urls) {
        for (const inputResponses of [
          undefined,
          { [KEY]: { action: 'accept' } },
          { [KEY]: { action: 'cancel' } },
        ]) {
          const spent = completed(await answer(h, uri, requestState, inputResponses, url), true);
          expect(textOf(spent)).toMatch(/already used/);
        }
      }
      expect(await left(h.db, uri)).toEqual(ids);
    },
  },
  {
    id: 'cancel',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const { requestState, candidates } = await ask(h, uri, ids);
      const cancelled = completed(
        await answer(h, uri, requestState, { [KEY]: { action: 'cancel' } }),
      );
      expect(cancelled.structuredContent).toBeUndefined();
      expect(await left(h.db, uri)).toEqual(ids);
      // Cancel consumes nothing: the same ticket is answered later, on the other instance.
      const chosen = candidates[2] as string;
      const reply = await answer(h, uri, requestState, accept(chosen), h.urls[0]);
      expect(deletedBy(reply, uri)).toBe(chosen);
      expect(await left(h.db, uri)).toEqual(without(ids, chosen));
    },
  },
  {
    id: 'missing',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const { requestState, candidates } = await ask(h, uri, ids);
      for (const inputResponses of [undefined, {}, { [KEY]: { action: 'accept' } }]) {
        const again = asked(await answer(h, uri, requestState, inputResponses), KEY);
        expect(again.requestState).toBe(requestState);
        expect(again.form.message).toMatch(/answer/i);
        expect(await left(h.db, uri)).toEqual(ids);
      }
      const chosen = candidates[0] as string;
      expect(deletedBy(await answer(h, uri, requestState, accept(chosen)), uri)).toBe(chosen);
      expect(await left(h.db, uri)).toEqual(without(ids, chosen));
    },
  },
  {
    id: 'tampered',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const { requestState, candidates } = await ask(h, uri, ids);
      const forged = tamper(requestState);
      expect(forged).not.toBe(requestState);
      failed(await answer(h, uri, forged, accept(candidates[0] as string)), INVALID_PARAMS);
      expect(await left(h.db, uri)).toEqual(ids);
    },
  },
  {
    id: 'arguments',
    async run(h) {
      const first = await seed(h.db);
      const second = await seed(h.db);
      const { requestState, candidates } = await ask(h, first.uri, first.ids);
      // The ticket for workspace 1, presented for workspace 2 (and for another title).
      const chosen = candidates[0] as string;
      for (const swapped of [args(second.uri), { workspaceUri: first.uri, title: 'Roadmap' }]) {
        const reply = await call(h.urls[1], h.principals.alice.token, TOOL, swapped, {
          requestState,
          inputResponses: accept(chosen),
        });
        expect(failed(reply, INVALID_PARAMS).message).toMatch(/requestState rejected/);
      }
      expect(await left(h.db, first.uri)).toEqual(first.ids);
      expect(await left(h.db, second.uri)).toEqual(second.ids);
    },
  },
  {
    id: 'principal',
    async run(h) {
      // Bob is a member too: only the ticket's binding to alice stops him.
      const { uri, ids } = await seed(h.db, ['alice', 'bob']);
      const { requestState, candidates } = await ask(h, uri, ids);
      const reply = await call(h.urls[1], h.principals.bob.token, TOOL, args(uri), {
        requestState,
        inputResponses: accept(candidates[0] as string),
      });
      expect(failed(reply, INVALID_PARAMS).message).toMatch(/another caller/);
      expect(await left(h.db, uri)).toEqual(ids);
    },
  },
  {
    id: 'expired',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const { requestState, candidates } = await atOffset(h, -EXPIRED_OFFSET_MS, () =>
        ask(h, uri, ids),
      );
      const reply = await answer(h, uri, requestState, accept(candidates[0] as string));
      expect(failed(reply, INVALID_PARAMS).message).toMatch(/expired/);
      expect(await left(h.db, uri)).toEqual(ids);
    },
  },
  {
    id: 'outside',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const elsewhere = await seed(h.db, ['alice'], 1);
      const { requestState } = await ask(h, uri, ids);
      const foreign = elsewhere.ids[0] as string;
      const again = asked(await answer(h, uri, requestState, accept(foreign)), KEY);
      expect(again.requestState).toBe(requestState);
      expect(await left(h.db, uri)).toEqual(ids);
      expect(await left(h.db, elsewhere.uri)).toEqual(elsewhere.ids);
    },
  },
  {
    id: 'mismatch',
    na: 'notes_delete has no typed name: the person picks from the signed candidates (see "set")',
  },
  {
    id: 'reissue',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const { requestState, candidates } = await ask(h, uri, ids);
      const chosen = candidates[0] as string;
      const first = await answer(h, uri, requestState, accept(chosen));
      expect(deletedBy(first, uri)).toBe(chosen);
      // The client lost the response and re-issues the same call: the recorded outcome, on either instance.
      for (const url of h.urls) {
        expect((await answer(h, uri, requestState, accept(chosen), url)).result).toEqual(
          first.result,
        );
      }
      // The used ticket with another answer deletes nothing more.
      const other = completed(
        await answer(h, uri, requestState, accept(candidates[1] as string)),
        true,
      );
      expect(textOf(other)).toMatch(/already used/);
      expect(await left(h.db, uri)).toEqual(without(ids, chosen));
    },
  },
  {
    id: 'concurrent',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const { requestState, candidates } = await ask(h, uri, ids);
      // 20 presentations at once, alternating instances, answering all three candidates.
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          answer(h, uri, requestState, accept(candidates[i % 3] as string), h.urls[i % 2]),
        ),
      );
      const rest = await left(h.db, uri);
      expect(rest).toHaveLength(ids.length - 1);
      const gone = ids.find((id) => !rest.includes(id)) as string;
      const performed = replies.filter(
        (r) => r.result?.resultType === 'complete' && !r.result.isError,
      );
      expect(performed.length).toBeGreaterThan(0);
      for (const reply of performed) {
        expect(deletedBy(reply, uri)).toBe(gone);
        expect(reply.result).toEqual(performed[0]?.result);
      }
      // Every other presentation is refused without a second question or mutation.
      for (const reply of replies.filter((r) => !performed.includes(r))) {
        expect(textOf(completed(reply, true))).toMatch(USED_OR_IN_PROGRESS);
      }
    },
  },
  {
    id: 'capabilities',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const alice = h.principals.alice.token;
      for (const { capabilities } of WITHOUT_FORM) {
        const error = failed(
          await call(h.urls[0], alice, TOOL, args(uri), { capabilities }),
          MISSING_CAPABILITY,
        );
        expect(error.data?.requiredCapabilities).toEqual({ elicitation: { form: {} } });
      }
      // Capabilities count per request: round 2 without form elicitation is refused too, consuming nothing.
      const { requestState, candidates } = await ask(h, uri, ids);
      const chosen = candidates[0] as string;
      const round2 = await call(h.urls[1], alice, TOOL, args(uri), {
        requestState,
        inputResponses: accept(chosen),
        capabilities: {},
      });
      failed(round2, MISSING_CAPABILITY);
      expect(await left(h.db, uri)).toEqual(ids);
      expect(deletedBy(await answer(h, uri, requestState, accept(chosen)), uri)).toBe(chosen);
      expect(await left(h.db, uri)).toEqual(without(ids, chosen));
    },
  },
  {
    id: 'official',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const offered: string[][] = [];
      const { value: result, wire } = await withOfficialClient(
        h.urls[0],
        h.principals.alice.token,
        ({ requestedSchema }) => {
          const choices = fieldOptions(requestedSchema.properties.note_id) ?? [];
          offered.push(choices);
          return { action: 'accept', content: { note_id: choices[1] as string, confirm: true } };
        },
        (client) => client.callTool({ name: TOOL, arguments: args(uri) }),
      );
      expect(wire.violations).toEqual([]);
      expect(wire.methods.filter((m) => m === 'tools/call')).toHaveLength(2);
      // Every request sent and every response received was checked against schema.json.
      expect(wire.checked).toBe(2 * wire.methods.length);
      expect(offered).toHaveLength(1);
      expect([...(offered[0] ?? [])].sort()).toEqual(ids);
      const chosen = offered[0]?.[1] as string;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({
        deleted: { id: chosen, workspaceUri: uri },
      });
      expect(await left(h.db, uri)).toEqual(without(ids, chosen));
    },
  },
  {
    id: 'legacy',
    async run(h) {
      const { uri, ids } = await seed(h.db);
      const offered: string[][] = [];
      const person = ({ requestedSchema }: Parameters<Person>[0]) => {
        const choices = fieldOptions(requestedSchema.properties.note_id) ?? [];
        offered.push(choices);
        return {
          action: 'accept' as const,
          content: { note_id: choices[1] as string, confirm: true },
        };
      };
      if (h.combination.adapter !== 'sdk') {
        await refusesLegacyClient(h, person);
        expect(offered).toEqual([]);
        expect(await left(h.db, uri)).toEqual(ids);
        return;
      }
      // On a session of instance B: the question arrives as elicitation/create, the ticket stays there.
      const { value: result, wire } = await withOfficialClient(
        h.urls[1],
        h.principals.alice.token,
        person,
        (client) => client.callTool({ name: TOOL, arguments: args(uri) }),
        'legacy',
      );
      expect(wire.methods).toContain('initialize');
      expect(wire.methods.filter((m) => m === 'tools/call')).toHaveLength(1);
      expect(offered).toHaveLength(1);
      expect([...(offered[0] ?? [])].sort()).toEqual(ids);
      const chosen = offered[0]?.[1] as string;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({
        deleted: { id: chosen, workspaceUri: uri },
      });
      expect(await left(h.db, uri)).toEqual(without(ids, chosen));
    },
  },
  REBINDING,
];
