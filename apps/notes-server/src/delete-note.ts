/**
 * `notes_delete`, declared once for every entry point: `gate.tool()` serves
 * it on `@mrtr/server` (`tools.ts`), `registerGatedTool` of `@mrtr/sdk` on
 * the official SDK's `McpServer` (`sdk-app.ts`).
 */
import { createHash } from 'node:crypto';
import { singleLineText } from '@mrtr/example-kit';
import {
  choose,
  confirm,
  type FormFields,
  type GatedToolDeclaration,
  preview,
  quoted,
  withoutAsking,
} from '@mrtr/gate';
import type { SqlDriver, SqlQueryable } from '@mrtr/sql';
import { type CallToolResult, textResult } from '@mrtr/wire';
import { z } from 'zod';
import { deleteNote, findByTitle, isMember, type Note } from './notes.js';

export const WorkspaceUri = singleLineText(200).describe('Workspace URI, e.g. notes://team');
// Quoted in the question: one line, no bidi controls (see singleLineText).
export const Title = singleLineText(200);

const DeleteArgs = z.strictObject({
  workspaceUri: WorkspaceUri,
  title: Title.describe('Exact title of the note'),
  noteId: z
    .string()
    .regex(/^note-[0-9a-f]{10}$/)
    .optional()
    .describe(
      'Optional: the id of one note of that title (from notes_list), to be asked about that note alone',
    ),
});

/** At most this many matches are offered in one form. */
const MAX_CANDIDATES = 20;
/** Characters of a note's body shown beside its id, cut on a character boundary. */
const PREVIEW_LENGTH = 40;

/** The refusal of a tool called on a workspace the principal is not a member of. */
export function noAccess(uri: string): CallToolResult {
  return textResult(`You are not a member of a workspace ${quoted(uri, 200)}.`, { isError: true });
}

/**
 * A note's revision, shown beside it: 64 bits of the SHA-256 of all it holds
 * (id, workspace, title, body, creation time), as 16 hex digits. The question
 * shows only a preview of the body; with the revision in it, a note edited
 * past its preview, or deleted and created again under its id, between the
 * question and the answer changes the question the ticket sealed, and is
 * asked about afresh rather than deleted.
 */
function revisionOf(n: Note): string {
  const all = JSON.stringify([n.id, n.workspaceUri, n.title, n.body, n.createdAt]);
  return createHash('sha256').update(all).digest('hex').slice(0, 16);
}

/** A declaration for a store whose transaction is a `SqlQueryable`, typed from its members. */
function declare<Args, View, F extends FormFields>(
  declaration: GatedToolDeclaration<Args, View, F, SqlQueryable>,
): GatedToolDeclaration<Args, View, F, SqlQueryable> {
  return declaration;
}

/**
 * The gated `notes_delete {workspaceUri, title}`: the person chooses which of
 * the notes with that title to delete and confirms. With `approvals` (the
 * gate has an approval page) a client that declares only URL elicitation is
 * sent to the page.
 */
export function deleteNoteDeclaration(db: SqlDriver, options: { approvals: boolean }) {
  return declare({
    name: 'notes_delete',
    title: 'Delete a note',
    description:
      'Delete one note by title. A person confirms which note, through a form (or on this server’s approval page); nothing is deleted without that confirmation.',
    args: DeleteArgs,
    key: 'delete_choice',
    level: options.approvals ? 'form-or-url' : 'form',
    form: {
      note_id: choose({ title: 'Note to delete' }),
      confirm: confirm({ title: 'Yes, delete it permanently' }),
    },
    // Every round, and again inside the claim with its transaction (rows locked).
    async ask({ args, principal, tx }) {
      const q = tx ?? db;
      if (!(await isMember(q, principal, args.workspaceUri)))
        return withoutAsking(noAccess(args.workspaceUri));
      const titled = await findByTitle(q, args.workspaceUri, args.title, tx !== undefined);
      const matches =
        args.noteId === undefined ? titled : titled.filter((n) => n.id === args.noteId);
      if (matches.length === 0)
        return withoutAsking(
          textResult(
            `No note${args.noteId === undefined ? '' : ` ${args.noteId}`} titled ${quoted(args.title, 200)} in ${quoted(args.workspaceUri, 200)}.`,
            { isError: true },
          ),
        );
      // The oldest first: a call after each deletion offers the next ones.
      const offered = matches.slice(0, MAX_CANDIDATES);
      // The revision binds all of the note to the question the ticket seals (see revisionOf).
      const label = (n: (typeof matches)[number]) =>
        `${n.id} (created ${n.createdAt.slice(0, 16).replace('T', ' ')} UTC, revision ${revisionOf(n)}): ${preview(n.body, PREVIEW_LENGTH)}`;
      const head =
        matches.length === 1
          ? `Delete the note ${quoted(args.title, 200)} from ${quoted(args.workspaceUri, 200)}? This cannot be undone.`
          : matches.length > offered.length
            ? `${matches.length} notes titled ${quoted(args.title, 200)} are in ${quoted(args.workspaceUri, 200)}; the ${offered.length} oldest are offered here (to be asked about another, call notes_delete with its noteId, from notes_list). Choose the one to delete and confirm. This cannot be undone.`
            : `${matches.length} notes titled ${quoted(args.title, 200)} are in ${quoted(args.workspaceUri, 200)}. Choose the one to delete and confirm. This cannot be undone.`;
      return {
        message: [head, ...offered.map((n) => `• ${label(n)}`)].join('\n'),
        view: offered,
        choices: { note_id: offered.map((n) => ({ value: n.id, label: label(n) })) },
      };
    },
    async perform({ answer, view, tx }) {
      const note = view.find((n) => n.id === answer.note_id);
      if (!note) throw new Error('the chosen note is not among those asked about');
      await deleteNote(tx, note.id);
      return textResult(
        `Deleted ${note.id} ${quoted(note.title, 200)} from ${quoted(note.workspaceUri, 200)}.`,
        {
          structuredContent: {
            deleted: { id: note.id, workspaceUri: note.workspaceUri, title: note.title },
          },
        },
      );
    },
    declined: () => textResult('Not deleted: the deletion was declined. Nothing was changed.'),
    cancelled: () => textResult('The question was dismissed. This request deleted nothing.'),
  });
}
