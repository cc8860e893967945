/**
 * The scenarios of `apps/file-deleter`: `delete_file {path}` states the
 * file's size and modification time and asks the person to type the path
 * (`confirm_name`), give a reason and choose whether to keep a backup. Both
 * instances serve one files root; every scenario checks the folder (and the
 * `file_deletions` table), not only the answer.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
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

const TOOL = 'delete_file';
const KEY = 'confirm_delete';
const CONTENT = 'quarterly numbers\n';

/** A fresh file `m-<tag>/report.txt` under the root; its path. */
function seed(h: RunningCombination): string {
  const folder = `m-${randomBytes(5).toString('hex')}`;
  mkdirSync(join(h.files, folder));
  writeFileSync(join(h.files, folder, 'report.txt'), CONTENT);
  return `${folder}/report.txt`;
}

/** What the root holds of `path`: its content, its backup, the trash, and the deletions recorded. */
async function state(h: RunningCombination, path: string) {
  const read = (p: string) =>
    existsSync(join(h.files, p)) ? readFileSync(join(h.files, p), 'utf8') : null;
  const rows = await h.db.query('SELECT 1 FROM file_deletions WHERE path = $1', [path]);
  return {
    file: read(path),
    backup: read(`${path}.bak`),
    trash: readdirSync(join(h.files, '.mrtr-trash')),
    recorded: rows.rows.length,
  };
}
const untouched = { file: CONTENT, backup: null, trash: [], recorded: 0 };
const deleted = (backup: boolean) => ({
  file: null,
  backup: backup ? CONTENT : null,
  trash: [],
  recorded: 1,
});

const typed = (confirm_name: string, keep_backup = false) => ({
  [KEY]: { action: 'accept', content: { confirm_name, reason: 'superseded by Q4', keep_backup } },
});

/** Round 1 on instance A as alice: the ticket; the question states the size. */
async function ask(h: RunningCombination, path: string) {
  const q = asked(await call(h.urls[0], h.principals.alice.token, TOOL, { path }), KEY);
  expect(q.form.message).toMatch(
    new RegExp(`^Confirm deletion of "${path.replace('.', '\\.')}" \\(18 B, modified `),
  );
  expect(q.form.requestedSchema.required).toEqual(['confirm_name', 'reason']);
  return q.requestState;
}

/** Round 2 on instance B (or `url`) as alice. */
const answer = (
  h: RunningCombination,
  path: string,
  requestState: string,
  inputResponses?: Record<string, unknown>,
  url = h.urls[1],
) =>
  call(
    url,
    h.principals.alice.token,
    TOOL,
    { path },
    {
      requestState,
      ...(inputResponses ? { inputResponses } : {}),
    },
  );

/** A complete result that deleted `path`, keeping a backup or not. */
function deletes(reply: Reply, path: string, backup: boolean) {
  const result = completed(reply);
  expect(result.structuredContent).toEqual({
    deleted: { path, size: 18, backup: backup ? `${path}.bak` : null },
  });
  return result;
}

export const FILE_DELETER_SCENARIOS: Scenario[] = [
  {
    id: 'happy',
    async run(h) {
      const path = seed(h);
      const ticket = await ask(h, path);
      expect(await state(h, path)).toEqual(untouched); // round 1 deletes nothing
      deletes(await answer(h, path, ticket, typed(path)), path, false);
      expect(await state(h, path)).toEqual(deleted(false));
    },
  },
  {
    id: 'decline',
    async run(h) {
      const path = seed(h);
      const ticket = await ask(h, path);
      const declined = completed(await answer(h, path, ticket, { [KEY]: { action: 'decline' } }));
      expect(textOf(declined)).toMatch(/declined/);
      const late = completed(await answer(h, path, ticket, typed(path)), true);
      expect(textOf(late)).toMatch(/already used/);
      expect(await state(h, path)).toEqual(untouched);
    },
  },
  {
    id: 'cancel',
    async run(h) {
      const path = seed(h);
      const ticket = await ask(h, path);
      completed(await answer(h, path, ticket, { [KEY]: { action: 'cancel' } }));
      expect(await state(h, path)).toEqual(untouched);
      deletes(await answer(h, path, ticket, typed(path, true), h.urls[0]), path, true);
      expect(await state(h, path)).toEqual(deleted(true));
    },
  },
  {
    id: 'missing',
    async run(h) {
      const path = seed(h);
      const ticket = await ask(h, path);
      for (const inputResponses of [undefined, {}, { [KEY]: { action: 'accept', content: {} } }]) {
        const again = asked(await answer(h, path, ticket, inputResponses), KEY);
        expect(again.requestState).toBe(ticket);
        expect(again.form.message).toMatch(/answer/i);
        expect(await state(h, path)).toEqual(untouched);
      }
      deletes(await answer(h, path, ticket, typed(path)), path, false);
    },
  },
  {
    id: 'tampered',
    async run(h) {
      const path = seed(h);
      const ticket = await ask(h, path);
      failed(await answer(h, path, tamper(ticket), typed(path)), INVALID_PARAMS);
      expect(await state(h, path)).toEqual(untouched);
    },
  },
  {
    id: 'arguments',
    async run(h) {
      const path = seed(h);
      const other = seed(h);
      const ticket = await ask(h, path);
      // The ticket for one file, presented to delete another, with that one's path typed.
      const reply = await answer(h, other, ticket, typed(other));
      expect(failed(reply, INVALID_PARAMS).message).toMatch(/requestState rejected/);
      expect(await state(h, path)).toEqual(untouched);
      expect(await state(h, other)).toEqual(untouched);
    },
  },
  {
    id: 'principal',
    async run(h) {
      const path = seed(h);
      const ticket = await ask(h, path);
      const reply = await call(
        h.urls[1],
        h.principals.bob.token,
        TOOL,
        { path },
        {
          requestState: ticket,
          inputResponses: typed(path),
        },
      );
      expect(failed(reply, INVALID_PARAMS).message).toMatch(/another caller/);
      expect(await state(h, path)).toEqual(untouched);
    },
  },
  {
    id: 'expired',
    async run(h) {
      const path = seed(h);
      const ticket = await atOffset(h, -EXPIRED_OFFSET_MS, () => ask(h, path));
      expect(failed(await answer(h, path, ticket, typed(path)), INVALID_PARAMS).message).toMatch(
        /expired/,
      );
      expect(await state(h, path)).toEqual(untouched);
    },
  },
  {
    id: 'outside',
    na: 'delete_file offers no choices: its target is the path argument, bound by its digest (see "arg")',
  },
  {
    id: 'mismatch',
    async run(h) {
      const path = seed(h);
      const ticket = await ask(h, path);
      for (const wrong of [`${path}x`, path.toUpperCase(), 'report.txt']) {
        const again = asked(await answer(h, path, ticket, typed(wrong, true)), KEY);
        expect(again.requestState).toBe(ticket);
        expect(again.form.message).toContain(`you typed "${wrong}", expected "${path}"`);
        expect(await state(h, path)).toEqual(untouched);
      }
      deletes(await answer(h, path, ticket, typed(path)), path, false);
      expect(await state(h, path)).toEqual(deleted(false));
    },
  },
  {
    id: 'reissue',
    async run(h) {
      const path = seed(h);
      const ticket = await ask(h, path);
      const first = await answer(h, path, ticket, typed(path));
      deletes(first, path, false);
      // A new file under the same name: the re-sent confirmation must not take it.
      writeFileSync(join(h.files, path), 'a new file\n');
      for (const url of h.urls)
        expect((await answer(h, path, ticket, typed(path), url)).result).toEqual(first.result);
      const more = completed(await answer(h, path, ticket, typed(path, true)), true);
      expect(textOf(more)).toMatch(/already used/);
      expect(await state(h, path)).toEqual({ ...deleted(false), file: 'a new file\n' });
    },
  },
  {
    id: 'concurrent',
    async run(h) {
      const path = seed(h);
      const ticket = await ask(h, path);
      // 20 presentations at once on both instances, half of them asking to keep a backup.
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          answer(h, path, ticket, typed(path, Math.floor(i / 2) % 2 === 1), h.urls[i % 2]),
        ),
      );
      const performed = replies.filter(
        (r) => r.result?.resultType === 'complete' && !r.result.isError,
      );
      expect(performed.length).toBeGreaterThan(0);
      const outcome = completed(performed[0] as Reply).structuredContent as {
        deleted: { backup: string | null };
      };
      const backup = outcome.deleted.backup !== null;
      for (const reply of performed) {
        deletes(reply, path, backup);
        expect(reply.result).toEqual(performed[0]?.result);
      }
      for (const reply of replies.filter((r) => !performed.includes(r)))
        expect(textOf(completed(reply, true))).toMatch(USED_OR_IN_PROGRESS);
      // The one outcome reported is the one in the folder.
      expect(await state(h, path)).toEqual(deleted(backup));
    },
  },
  {
    id: 'capabilities',
    async run(h) {
      const path = seed(h);
      const alice = h.principals.alice.token;
      for (const { capabilities } of WITHOUT_FORM) {
        const error = failed(
          await call(h.urls[0], alice, TOOL, { path }, { capabilities }),
          MISSING_CAPABILITY,
        );
        expect(error.data?.requiredCapabilities).toEqual({ elicitation: { form: {} } });
      }
      const ticket = await ask(h, path);
      const round2 = await call(
        h.urls[1],
        alice,
        TOOL,
        { path },
        {
          requestState: ticket,
          inputResponses: typed(path),
          capabilities: {},
        },
      );
      failed(round2, MISSING_CAPABILITY);
      expect(await state(h, path)).toEqual(untouched);
      deletes(await answer(h, path, ticket, typed(path)), path, false);
    },
  },
  {
    id: 'official',
    async run(h) {
      const path = seed(h);
      const shown: string[] = [];
      const { value: result, wire } = await withOfficialClient(
        h.urls[0],
        h.principals.alice.token,
        ({ message }) => {
          shown.push(message);
          // The person reads the path in the question and types it, with a reason.
          // In quotes, `\` before any quote-like character of the path (`quoted` of @mrtr/gate).
          const shownName = /^Confirm deletion of "((?:[^"\\]|\\.)*)" \(/.exec(message)?.[1] ?? '';
          const name = shownName.replace(/\\(.)/g, '$1');
          return { action: 'accept', content: { confirm_name: name, reason: 'superseded by Q4' } };
        },
        (client) => client.callTool({ name: TOOL, arguments: { path } }),
      );
      expect(wire.violations).toEqual([]);
      expect(wire.methods.filter((m) => m === 'tools/call')).toHaveLength(2);
      expect(wire.checked).toBe(2 * wire.methods.length);
      expect(shown).toHaveLength(1);
      expect(shown[0]).toContain('18 bytes');
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ deleted: { path, size: 18, backup: null } });
      expect(await state(h, path)).toEqual(deleted(false));
    },
  },
  {
    id: 'legacy',
    async run(h) {
      // The file deleter has no SDK entry point: only our 2026-07-28 endpoint serves it.
      const path = seed(h);
      const shown: string[] = [];
      await refusesLegacyClient(h, ({ message }) => {
        shown.push(message);
        return { action: 'accept', content: { confirm_name: path, reason: 'superseded by Q4' } };
      });
      expect(shown).toEqual([]);
      expect(await state(h, path)).toEqual(untouched);
    },
  },
  REBINDING,
];
