import { type ConfirmationGate, StaleTargetError } from '@mrtr/gate';
import type { AnyToolDefinition, ToolCallContext, ToolDefinition } from '@mrtr/server';
import { textResult } from '@mrtr/wire';
import { z } from 'zod';
import type { Database, Queryable } from './db.js';
import { createNote, deleteNote, findByTitle, isMember, listNotes, lockNote } from './notes.js';

const WorkspaceUri = z.string().min(1).max(200).describe('Workspace URI, e.g. notes://team');
const Title = z.string().min(1).max(200);

function schema(s: z.ZodObject): { type: 'object'; [k: string]: unknown } {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s) as Record<string, unknown>;
  return { ...rest, type: 'object' };
}

const CreateArgs = z.object({
  workspaceUri: WorkspaceUri,
  title: Title,
  body: z.string().max(10_000).optional(),
});
const ListArgs = z.object({ workspaceUri: WorkspaceUri });
const DeleteArgs = z.object({
  workspaceUri: WorkspaceUri,
  title: Title.describe('Exact title of the note'),
});

/** At most this many matches are offered in one form; the ticket stays well under 4 KiB. */
const MAX_CANDIDATES = 20;

/** What the form states about each candidate, sealed in the ticket so every round shows the same. */
type CandidateSummary = { id: string; created: string; preview: string };

function noAccess(uri: string) {
  return textResult(`You are not a member of a workspace ${uri}.`, { isError: true });
}

/**
 * The notes tools, gated deletion included. `gate` holds the ticket keys and
 * the replay store; a store that hands `perform` a transaction (the
 * PostgreSQL store on `db`) gets the delete inside it, next to its claim.
 */
export function notesTools(
  db: Database,
  gate: ConfirmationGate<Queryable | undefined>,
): AnyToolDefinition[] {
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

  const remove: ToolDefinition<z.infer<typeof DeleteArgs>> = {
    name: 'notes_delete',
    title: 'Delete a note',
    description:
      'Delete one note by title. A person confirms which note, through a form; nothing is deleted without that confirmation.',
    inputSchema: schema(DeleteArgs),
    annotations: { destructiveHint: true, idempotentHint: false },
    parse: (a) => DeleteArgs.parse(a),
    handler: (args, ctx: ToolCallContext) =>
      gate.run<CandidateSummary[]>(ctx, {
        key: 'delete_choice',
        candidateField: 'note_id',
        async prepare() {
          if (!(await isMember(db, ctx.principal.id, args.workspaceUri))) {
            return { result: noAccess(args.workspaceUri) };
          }
          const matches = await findByTitle(db, args.workspaceUri, args.title);
          if (matches.length === 0) {
            return {
              result: textResult(`No note titled "${args.title}" in ${args.workspaceUri}.`, {
                isError: true,
              }),
            };
          }
          if (matches.length > MAX_CANDIDATES) {
            return {
              result: textResult(
                `${matches.length} notes are titled "${args.title}"; at most ${MAX_CANDIDATES} can be offered. Rename some first.`,
                { isError: true },
              ),
            };
          }
          const app = matches.map((n) => ({
            id: n.id,
            created: n.createdAt.slice(0, 16).replace('T', ' '),
            preview: n.body.length > 40 ? `${n.body.slice(0, 39)}…` : n.body,
          }));
          return { candidates: matches.map((n) => n.id), app };
        },
        question({ candidates, app }, notice) {
          const lines = app.map((c) => `• ${c.id} (created ${c.created} UTC): ${c.preview}`);
          const head =
            app.length === 1
              ? `Delete the note "${args.title}" from ${args.workspaceUri}? This cannot be undone.`
              : `${app.length} notes titled "${args.title}" are in ${args.workspaceUri}. Choose the one to delete and confirm. This cannot be undone.`;
          return {
            message: [notice, head, ...lines].filter(Boolean).join('\n'),
            requestedSchema: {
              type: 'object',
              properties: {
                note_id: { type: 'string', title: 'Note to delete', enum: candidates ?? [] },
                confirm: { type: 'boolean', title: 'Yes, delete it permanently' },
              },
              required: ['note_id', 'confirm'],
            },
          };
        },
        consents: (content) => content.confirm === true,
        declined: () => textResult('Not deleted: the deletion was declined. Nothing was changed.'),
        cancelled: () =>
          textResult(
            'Not deleted: the question was dismissed. Nothing was changed; the same confirmation can still be answered until it expires.',
          ),
        async perform({ content, tx }) {
          const id = content.note_id as string;
          const remove = async (tx: Queryable) => {
            // Re-authorize and re-read now: the form was shown minutes ago.
            if (!(await isMember(tx, ctx.principal.id, args.workspaceUri)))
              return noAccess(args.workspaceUri);
            const note = await lockNote(tx, id);
            if (!note || note.workspaceUri !== args.workspaceUri || note.title !== args.title) {
              throw new StaleTargetError(`note ${id} changed since the question was asked`);
            }
            await deleteNote(tx, id);
            return textResult(`Deleted ${id} "${note.title}" from ${note.workspaceUri}.`, {
              structuredContent: {
                deleted: { id, workspaceUri: note.workspaceUri, title: note.title },
              },
            });
          };
          // The replay store's transaction, when it has one: the claim, the delete and the
          // recorded outcome then commit together. Otherwise a transaction of our own.
          return tx ? remove(tx) : db.transaction(remove);
        },
      }),
  };

  return [create, list, remove];
}
