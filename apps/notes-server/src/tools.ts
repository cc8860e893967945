import { storableText } from '@mrtr/example-kit';
import { type ConfirmationGate, quoted } from '@mrtr/gate';
import type { AnyToolDefinition, ToolDefinition } from '@mrtr/server';
import type { SqlDriver, SqlQueryable } from '@mrtr/sql';
import { type CallToolResult, textResult } from '@mrtr/wire';
import { z } from 'zod';
import { deleteNoteDeclaration, noAccess, Title, WorkspaceUri } from './delete-note.js';
import { createNote, isMember, listNotes } from './notes.js';

/** The JSON Schema of what a caller may send (`io: 'input'`: fields with a default are optional). */
function schema(s: z.ZodObject): { type: 'object'; [k: string]: unknown } {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { io: 'input' }) as Record<
    string,
    unknown
  >;
  return { ...rest, type: 'object' };
}

export const CreateArgs = z.strictObject({
  workspaceUri: WorkspaceUri,
  title: Title,
  body: storableText(10_000, 0).optional(),
});
export const ListArgs = z.strictObject({ workspaceUri: WorkspaceUri });

/** Names and descriptions of the ungated notes tools, for every entry point. */
export const NOTES_TOOLS = {
  create: {
    name: 'notes_create',
    title: 'Create a note',
    description:
      'Create a note in a workspace. A new workspace URI creates the workspace with you as its member.',
  },
  list: {
    name: 'notes_list',
    title: 'List notes',
    description: 'List the notes of a workspace you are a member of.',
  },
} as const;

/** `notes_create` for `principal`: the note, or a refusal when they cannot write there. */
export async function createFor(
  db: SqlDriver,
  principal: string,
  args: z.infer<typeof CreateArgs>,
): Promise<CallToolResult> {
  const note = await createNote(db, principal, args.workspaceUri, args.title, args.body ?? '');
  if (!note) return noAccess(args.workspaceUri);
  return textResult(
    `Created ${note.id} ${quoted(note.title, 200)} in ${quoted(note.workspaceUri, 200)}.`,
    {
      structuredContent: {
        note: { id: note.id, workspaceUri: note.workspaceUri, title: note.title },
      },
    },
  );
}

/** `notes_list` for `principal`: the workspace's notes, or a refusal when not a member. */
export async function listFor(
  db: SqlDriver,
  principal: string,
  args: z.infer<typeof ListArgs>,
): Promise<CallToolResult> {
  if (!(await isMember(db, principal, args.workspaceUri))) return noAccess(args.workspaceUri);
  const notes = await listNotes(db, args.workspaceUri);
  const summary = notes.map((n) => `${n.id}  ${quoted(n.title, 200)}`).join('\n') || '(no notes)';
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
}

/**
 * The notes tools, gated deletion included. `gate` holds the ticket keys and
 * the replay store whose claim commits in the transaction that deletes.
 */
export function notesTools(
  db: SqlDriver,
  gate: ConfirmationGate<SqlQueryable>,
): AnyToolDefinition[] {
  const create: ToolDefinition<z.infer<typeof CreateArgs>> = {
    ...NOTES_TOOLS.create,
    inputSchema: schema(CreateArgs),
    parse: (a) => CreateArgs.parse(a),
    handler: (args, ctx) => createFor(db, ctx.principal.id, args),
  };

  const list: ToolDefinition<z.infer<typeof ListArgs>> = {
    ...NOTES_TOOLS.list,
    inputSchema: schema(ListArgs),
    annotations: { readOnlyHint: true },
    parse: (a) => ListArgs.parse(a),
    handler: (args, ctx) => listFor(db, ctx.principal.id, args),
  };

  const remove = gate.tool(deleteNoteDeclaration(db, { approvals: gate.approvals !== undefined }));

  return [create, list, remove as AnyToolDefinition];
}
