import { storableText } from '@mrtr/example-kit';
import { type ConfirmationGate, choose, confirm, preview, withoutAsking } from '@mrtr/gate';
import type { AnyToolDefinition, ToolDefinition } from '@mrtr/server';
import { textResult } from '@mrtr/wire';
import { z } from 'zod';
import type { Database, Queryable } from './db.js';
import { createNote, deleteNote, findByTitle, isMember, listNotes } from './notes.js';

const WorkspaceUri = storableText(200).describe('Workspace URI, e.g. notes://team');
const Title = storableText(200);

/** The JSON Schema of what a caller may send (`io: 'input'`: fields with a default are optional). */
function schema(s: z.ZodObject): { type: 'object'; [k: string]: unknown } {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { io: 'input' }) as Record<
    string,
    unknown
  >;
  return { ...rest, type: 'object' };
}

const CreateArgs = z.strictObject({
  workspaceUri: WorkspaceUri,
  title: Title,
  body: storableText(10_000, 0).optional(),
});
const ListArgs = z.strictObject({ workspaceUri: WorkspaceUri });
const DeleteArgs = z.strictObject({
  workspaceUri: WorkspaceUri,
  title: Title.describe('Exact title of the note'),
});

/** At most this many matches are offered in one form. */
const MAX_CANDIDATES = 20;
/** Characters of a note's body shown beside its id, cut on a character boundary. */
const PREVIEW_LENGTH = 40;

function noAccess(uri: string) {
  return textResult(`You are not a member of a workspace ${uri}.`, { isError: true });
}

/**
 * The notes tools, gated deletion included. `gate` holds the ticket keys and
 * the replay store whose claim commits in the transaction that deletes.
 */
export function notesTools(db: Database, gate: ConfirmationGate<Queryable>): AnyToolDefinition[] {
  const create: ToolDefinition<z.infer<typeof CreateArgs>> = {
    name: 'notes_create',
    title: 'Create a note',
    description:
      'Create a note in a workspace. A new workspace URI creates the workspace with you as its member.',
    inputSchema: schema(CreateArgs),
    parse: (a) => CreateArgs.parse(a),
    async handler(args, ctx) {
      const note = await createNote(
        db,
        ctx.principal.id,
        args.workspaceUri,
        args.title,
        args.body ?? '',
      );
      if (!note) return noAccess(args.workspaceUri);
      return textResult(`Created ${note.id} "${note.title}" in ${note.workspaceUri}.`, {
        structuredContent: {
          note: { id: note.id, workspaceUri: note.workspaceUri, title: note.title },
        },
      });
    },
  };

  const list: ToolDefinition<z.infer<typeof ListArgs>> = {
    name: 'notes_list',
    title: 'List notes',
    description: 'List the notes of a workspace you are a member of.',
    inputSchema: schema(ListArgs),
    annotations: { readOnlyHint: true },
    parse: (a) => ListArgs.parse(a),
    async handler(args, ctx) {
      if (!(await isMember(db, ctx.principal.id, args.workspaceUri)))
        return noAccess(args.workspaceUri);
      const notes = await listNotes(db, args.workspaceUri);
      const summary = notes.map((n) => `${n.id}  ${n.title}`).join('\n') || '(no notes)';
      return textResult(summary, {
        structuredContent: {
          notes: notes.map(({ id, workspaceUri, title, createdAt }) => ({
            id,
            workspaceUri,
            title,
            createdAt,
          })),
        },
      });
    },
  };

  const remove = gate.tool({
    name: 'notes_delete',
    title: 'Delete a note',
    description:
      'Delete one note by title. A person confirms which note, through a form (or on this server’s approval page); nothing is deleted without that confirmation.',
    args: DeleteArgs,
    key: 'delete_choice',
    level: gate.approvals ? 'form-or-url' : 'form',
    form: {
      note_id: choose({ title: 'Note to delete' }),
      confirm: confirm({ title: 'Yes, delete it permanently' }),
    },
    // Every round, and again inside the claim with its transaction (rows locked).
    async ask({ args, principal, tx }) {
      const q = tx ?? db;
      if (!(await isMember(q, principal, args.workspaceUri)))
        return withoutAsking(noAccess(args.workspaceUri));
      const matches = await findByTitle(q, args.workspaceUri, args.title, tx !== undefined);
      if (matches.length === 0)
        return withoutAsking(
          textResult(`No note titled "${args.title}" in ${args.workspaceUri}.`, { isError: true }),
        );
      if (matches.length > MAX_CANDIDATES)
        return withoutAsking(
          textResult(
            `${matches.length} notes are titled "${args.title}"; at most ${MAX_CANDIDATES} can be offered. Rename some first.`,
            { isError: true },
          ),
        );
      const label = (n: (typeof matches)[number]) =>
        `${n.id} (created ${n.createdAt.slice(0, 16).replace('T', ' ')} UTC): ${preview(n.body, PREVIEW_LENGTH)}`;
      const head =
        matches.length === 1
          ? `Delete the note "${args.title}" from ${args.workspaceUri}? This cannot be undone.`
          : `${matches.length} notes titled "${args.title}" are in ${args.workspaceUri}. Choose the one to delete and confirm. This cannot be undone.`;
      return {
        message: [head, ...matches.map((n) => `• ${label(n)}`)].join('\n'),
        view: matches,
        choices: { note_id: matches.map((n) => ({ value: n.id, label: label(n) })) },
      };
    },
    async perform({ answer, view, tx }) {
      const note = view.find((n) => n.id === answer.note_id);
      if (!note) throw new Error('the chosen note is not among those asked about');
      await deleteNote(tx, note.id);
      return textResult(`Deleted ${note.id} "${note.title}" from ${note.workspaceUri}.`, {
        structuredContent: {
          deleted: { id: note.id, workspaceUri: note.workspaceUri, title: note.title },
        },
      });
    },
    declined: () => textResult('Not deleted: the deletion was declined. Nothing was changed.'),
    cancelled: () =>
      textResult('Not deleted: the question was dismissed. This request changed nothing.'),
  });

  return [create, list, remove as AnyToolDefinition];
}
