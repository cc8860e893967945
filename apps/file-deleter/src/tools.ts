import { AsyncLocalStorage } from 'node:async_hooks';
import { posix } from 'node:path';
import {
  type ConfirmationGate,
  flag,
  quoted,
  StaleTargetError,
  text,
  typeToConfirm,
  withoutAsking,
} from '@mrtr/gate';
import type { AnyToolDefinition } from '@mrtr/server';
import { ErrorCode, McpError, textResult } from '@mrtr/wire';
import { filesize } from 'filesize';
import { z } from 'zod';
import type { Database, Queryable } from './db.js';
import {
  deletionsOf,
  lockIdentity,
  lockNonce,
  recordDeletion,
  settle,
  settleFile,
  settleSoon,
} from './deletions.js';
import { asFilesFault, FilesFault } from './fd.js';
import { PathArgument, shownPath, TRASH_DIR } from './paths.js';
import { type FileFacts, type FilesRoot, faultOf, filesUnavailable } from './root.js';
import { moveToTrash, trashNoncesOf } from './trash.js';

const DeleteArgs = z.strictObject({ path: PathArgument });
const TOOL_NAME = 'delete_file';

/** Test hooks of the tool: `beforeSettle` runs after the deletion committed, before the trash is emptied. */
export interface ToolHooks {
  beforeSettle?: () => Promise<void>;
}

const refused = (message: string) => textResult(message, { isError: true });
const size = (bytes: number) => filesize(bytes, { round: 1, standard: 'jedec' }) as string;
/** `2026-10-05 14:30` of nanoseconds since the epoch, UTC. */
const minute = (ns: string) =>
  new Date(Number(BigInt(ns) / 1_000_000n)).toISOString().slice(0, 16).replace('T', ' ');
/** `2026-10-05T14:30:12.123456789Z` of nanoseconds since the epoch. */
const exact = (ns: string) => {
  const n = BigInt(ns);
  const seconds = new Date(Number((n / 1_000_000_000n) * 1000n)).toISOString().slice(0, 19);
  return `${seconds}.${String(n % 1_000_000_000n).padStart(9, '0')}Z`;
};

/**
 * The question about `f`. Every fact the claim compares (device, inode,
 * size, modification and birth time to the nanosecond) is in the text, so a change to
 * any of them changes the question's digest and the gate asks afresh.
 */
function question(f: FileFacts): string {
  const backup = f.backupName
    ? `, unless you choose to keep a backup (it would be kept as ${quoted(f.backupName, 255)})`
    : ' (no backup name is free beside it, so no backup can be kept)';
  return [
    `Confirm deletion of ${shownPath(f.path)} (${size(f.size)}, modified ${minute(f.mtimeNs)} UTC).`,
    `This cannot be undone${backup}. Type the path (without the quotes) to confirm.`,
    `Checked again just before deleting: ${f.size.toLocaleString('en-US')} bytes, modified ${exact(f.mtimeNs)}, ${f.birthtimeNs === '0' ? '' : `created ${exact(f.birthtimeNs)}, `}device ${f.dev}, inode ${f.ino}. If any of these change, you are asked again.`,
    ...(f.twins.length
      ? [
          // Names read from disk, never checked as an argument is: quoted previews, so that a
          // name holding `, ` or a sentence reads as one name.
          `Careful: the same folder also holds ${f.twins.map((t) => quoted(t, 255)).join(', ')}, differing only in case or form.`,
        ]
      : []),
  ].join('\n');
}

/** Whether `result` is that of a deletion carried out (its `structuredContent.deleted`). */
const deletedBy = (result: object) => {
  const content = (result as { structuredContent?: unknown }).structuredContent;
  return typeof content === 'object' && content !== null && 'deleted' in content;
};

/**
 * The `-32603` of a call whose deletion did not complete while its file is
 * still in the trash, not under its name: `stuck` when it cannot go back
 * (the log says why), `failed` when settling failed (the database did not
 * answer; tried again soon and every minute). `cause` is the call's own error.
 */
function heldInTrash(path: string, held: 'stuck' | 'failed', cause: unknown): McpError {
  const error = new McpError(
    ErrorCode.InternalError,
    held === 'stuck'
      ? `This request deleted nothing, but the file it found at ${shownPath(path)} (the one you confirmed, or one that took the name in the instant before it was moved) could not be put back from ${TRASH_DIR} after the deletion did not complete (the server's log and the intent beside it say which): an operator must put it back.`
      : `This request did not complete, and ${shownPath(path)} is in ${TRASH_DIR}, not under its name, until the server can settle the deletion with the database, which did not answer: if the deletion was not committed, the file goes back under its name (the server tries again soon and every minute). Send the same confirmation again then: it returns the outcome, and deletes at most once.`,
  );
  if (cause !== undefined) Object.defineProperty(error, 'cause', { value: cause });
  return error;
}

/** What the ticket seals of the file asked about: its identity. */
interface Sealed {
  dev: string;
  ino: string;
  /** Deletions of that identity committed when asked (see `deletionsOf`); absent in older tickets. */
  deletions?: number;
}
const isSealed = (v: unknown): v is Sealed =>
  typeof v === 'object' && v !== null && 'dev' in v && 'ino' in v;

/**
 * The file deleter's tools: `delete_file {path}`, gated. Round 1 looks at
 * the file and asks with what only the server knows; the retry re-checks it
 * (same identity, size and mtime; a replaced or removed file is refused);
 * inside the claim the file is moved into `.mrtr-trash/<nonce>` and its
 * deletion recorded in the claim's transaction; after the commit the trash
 * entry is unlinked (see `settle`).
 */
export function fileTools(
  db: Database,
  root: FilesRoot,
  gate: ConfirmationGate<Queryable>,
  hooks: ToolHooks = {},
): AnyToolDefinition[] {
  /** The nonces whose file this call moved into the trash, to settle once the claim has ended. */
  const moved = new AsyncLocalStorage<Set<string>>();

  const remove = gate.tool({
    name: TOOL_NAME,
    title: 'Delete a file',
    description:
      'Delete one file under the files root. A person confirms by typing its path, gives a reason (recorded), and may keep a .bak copy; nothing is deleted without that confirmation.',
    args: DeleteArgs,
    key: 'confirm_delete',
    form: {
      confirm_name: typeToConfirm({ title: 'Type the file path to confirm' }),
      reason: text({
        title: 'Reason',
        description: "Why it's being deleted (recorded in the server audit log)",
        minLength: 5,
        maxLength: 200,
      }),
      keep_backup: flag({
        title: 'Keep a backup',
        description: 'Keep a .bak copy instead of deleting outright',
        default: false,
      }),
    },
    // Round 1, every retry, and inside the claim: look at the file again.
    async ask({ args, sealed, tx }) {
      let found = await lookup(args.path);
      const confirmed = isSealed(sealed);
      if ('refused' in found && found.missing && (confirmed || sealed === undefined) && !tx) {
        // The file may sit in the trash of a deletion that has not settled (its transaction
        // stalled, then rolled back): settle it first, then look again. In round 1 too, where
        // "there is no file" would have the person make a new one that keeps it from coming back.
        // What the trash holds is the file system's to say (a fault there is the files root's);
        // settling, the database's: only its failure is "the database did not answer".
        const nonces = await inTrash(args.path, confirmed ? sealed : undefined);
        const settled = await settleFile(db, root, nonces).catch((error: unknown) => {
          // A files root worded as broken (the trash swapped meanwhile) is no database's silence.
          if (error instanceof McpError) throw error;
          return error instanceof FilesFault ? error : ('stalled' as const);
        });
        const again = confirmed ? 'Send the same confirmation again' : `Call ${TOOL_NAME} again`;
        if (settled === 'stalled')
          return withoutAsking(
            refused(
              `${shownPath(args.path)} is in a deletion that has not finished settling (the database did not answer), so it is not under its name now. Nothing more was deleted; ${again.toLowerCase()} in a minute.`,
            ),
          );
        if (settled instanceof FilesFault)
          return withoutAsking(
            refused(
              `${shownPath(args.path)} is in ${TRASH_DIR} after a deletion that did not complete, and could not be put back yet: ${settled.message}. Nothing was deleted; the server tries again every minute. ${again} once it is back.`,
            ),
          );
        if (settled === 'stuck')
          return withoutAsking(
            refused(
              `${shownPath(args.path)} is in ${TRASH_DIR} after a deletion that did not complete, and cannot be put back (the server's log says why). Nothing was deleted; an operator must put it back.`,
            ),
          );
        // Look again whatever it found: another request or instance may have put the file back
        // between the first look and this settle, which then finds nothing of it in the trash.
        found = await lookup(args.path);
      }
      if ('refused' in found) {
        if (sealed !== undefined && found.missing)
          return withoutAsking(
            refused(
              `${shownPath(args.path)} was removed since you were asked. Nothing was deleted.`,
            ),
          );
        return withoutAsking(refused(`Not deleted: ${found.refused}.`));
      }
      const f = found.found;
      if (isSealed(sealed) && (sealed.dev !== f.dev || sealed.ino !== f.ino)) {
        // The confirmed file may be in the trash, kept from its name by the file there now: in a
        // deletion still in flight, committed but not yet emptied, or rolled back. Settling tells
        // (it waits for one in flight); inside a claim it cannot run, so nothing is said of which.
        const held = await inTrash(args.path, sealed).catch(() => []);
        const settled =
          held.length === 0
            ? 'none'
            : tx === undefined
              ? await settleFile(db, root, held).catch(() => 'unsettled' as const)
              : 'unsettled';
        if (settled === 'stuck')
          return withoutAsking(
            refused(
              `${shownPath(args.path)} now names another file, and the file you confirmed is in ${TRASH_DIR} after a deletion that did not complete: it cannot go back under its name while another file holds it. Nothing was deleted; an operator must put it back.`,
            ),
          );
        if (settled === 'restored')
          return withoutAsking(
            refused(
              `${shownPath(args.path)} is back under its name after a deletion that did not complete. Nothing was deleted by this request; send the same confirmation again to be asked about it.`,
            ),
          );
        if (settled === 'unsettled')
          return withoutAsking(
            refused(
              `${shownPath(args.path)} now names another file, and the file you confirmed is in ${TRASH_DIR}, in a deletion that has not settled yet. Nothing was deleted by this request; send the same confirmation again in a minute.`,
            ),
          );
        return withoutAsking(
          refused(
            `${shownPath(args.path)} was replaced by another file since you were asked, so it is not the file you confirmed. Nothing was deleted; call delete_file again to be asked about the file there now.`,
          ),
        );
      }
      // Where the file system keeps no birth time: a deletion of this identity committed since the
      // question means the file there now may be another one that took it (with one, the
      // question's birth time tells, and the count is not read).
      let deletions: number | undefined;
      // Inside the claim, a deletion of this file by another ticket in flight is waited for, with
      // or without birth times: two claims of one file moving it at once, the second could move
      // whatever file took the name after the first (helper-162 H1). Looked at again after it.
      if (tx !== undefined) await lockIdentity(tx, f.dev, f.ino);
      if (f.birthtimeNs !== '0' && tx !== undefined) {
        const again = await lookup(args.path);
        if (!('found' in again) || !root.sameFacts(again.found, f))
          return withoutAsking(
            refused(
              'refused' in again && again.missing
                ? `${shownPath(args.path)} was removed since you were asked. Nothing was deleted.`
                : `${shownPath(args.path)} changed since you were asked. Nothing was deleted; call delete_file again to be asked about the file there now.`,
            ),
          );
      }
      if (f.birthtimeNs === '0') {
        // Counted after a deletion in flight of this identity (the lock above), the count refuses
        // this ticket (below), whatever took the inode since.
        deletions = await deletionsOf(tx ?? db, f.dev, f.ino);
        // A deletion of the file looked at may have committed between the look and the count: the
        // count would then hold it, and a look-alike given its inode later would pass as the file
        // asked about. Look again: the file is still there only if no such deletion happened.
        const again = await lookup(args.path);
        if (!('found' in again) || !root.sameFacts(again.found, f))
          return withoutAsking(
            refused(
              sealed === undefined
                ? `Not deleted: ${shownPath(args.path)} changed while it was being looked at (another request may have deleted or replaced it). Call delete_file again to be asked about the file there now.`
                : 'refused' in again && again.missing
                  ? `${shownPath(args.path)} was removed since you were asked. Nothing was deleted.`
                  : `${shownPath(args.path)} changed since you were asked. Nothing was deleted; call delete_file again to be asked about the file there now.`,
            ),
          );
      }
      if (
        deletions !== undefined &&
        isSealed(sealed) &&
        typeof sealed.deletions === 'number' &&
        deletions > sealed.deletions
      )
        return withoutAsking(
          refused(
            // The same file put back (from its backup, say) is counted as deleted too: without a
            // birth time the two cannot be told apart, so neither is deleted on this ticket.
            `${shownPath(args.path)} was deleted since you were asked. The file there now has its device and inode number, and this file system keeps no birth time to tell whether it is the same file put back or another one. Nothing was deleted; call delete_file again to be asked about the file there now.`,
          ),
        );
      return {
        message: question(f),
        view: f,
        expect: { confirm_name: args.path },
        seal: { dev: f.dev, ino: f.ino, ...(deletions === undefined ? {} : { deletions }) },
      };
    },
    // Before the claim: a backup asked for where none can be kept is asked again, not spent.
    check: ({ view: f, answer }) =>
      answer.keep_backup && !f.backupName
        ? `No backup name is free beside ${shownPath(f.path)}, so no backup can be kept. Answer again without "Keep a backup" to delete it, or decline.`
        : undefined,
    async perform({ view: f, answer, tx, nonce, principal }) {
      const backup = answer.keep_backup ? f.backupName : undefined;
      // The name was free when checked; inside the claim it is looked up again and may be gone.
      if (answer.keep_backup && !backup)
        return refused(
          `Not deleted: no backup name is free beside ${shownPath(f.path)}. Nothing was changed.`,
        );
      await lockNonce(tx, nonce);
      await recordDeletion(tx, nonce, f, { principal, reason: answer.reason, backup });
      moved.getStore()?.add(nonce);
      const move = await moveToTrash(root, f, nonce, backup).catch((error: unknown) => {
        throw filesUnavailable(asFilesFault('moving the file aside', error));
      });
      if (move === 'changed')
        throw new StaleTargetError(`${f.path} changed or went just before it was moved`);
      // The backup's path from the root: beside the file, in the same folder.
      const backupPath = backup && posix.join(posix.dirname(f.path), backup);
      const kept = backupPath ? ` A backup is kept as ${shownPath(backupPath)}.` : '';
      return textResult(`Deleted ${shownPath(f.path)} (${size(f.size)}).${kept}`, {
        structuredContent: {
          deleted: { path: f.path, size: f.size, backup: backupPath ?? null },
        },
      });
    },
    declined: (args) => textResult(`Not deleted: deleting ${shownPath(args.path)} was declined.`),
    cancelled: (args) =>
      textResult(
        `The question about ${shownPath(args.path)} was dismissed. This request deleted nothing.`,
      ),
  });

  /**
   * The unsettled deletions in the trash of the file at `path` (of identity
   * `sealed` when given); a file system that refuses is a `-32603` that says so.
   */
  const inTrash = (path: string, sealed?: Sealed) =>
    trashNoncesOf(root, path, sealed?.dev, sealed?.ino).catch((error: unknown) => {
      throw filesUnavailable(asFilesFault('looking in the trash', error));
    });

  /** The file at `path`, or why not; a file system that refuses is a `-32603` that says so. */
  const lookup = (path: string) =>
    root.lookup(path).catch((error: unknown) => {
      throw filesUnavailable(asFilesFault('looking at the file', error));
    });

  const deleteFile: AnyToolDefinition = {
    ...remove,
    async handler(args, ctx) {
      const nonces = new Set<string>();
      let outcome: { result: Awaited<ReturnType<typeof remove.handler>> } | { error: unknown };
      try {
        outcome = {
          result: await moved.run(nonces, () =>
            remove.handler(args as z.infer<typeof DeleteArgs>, ctx),
          ),
        };
      } catch (error) {
        outcome = { error };
      }
      // Committed: unlink the trash entry. Rolled back: put the file back. Waits for the claim.
      if (nonces.size) await hooks.beforeSettle?.();
      // Why the file of a deletion of this call is not settled: `stuck` (it cannot go back),
      // `failed` (the settle failed, e.g. the database did not answer; tried again soon).
      let held: 'stuck' | 'failed' | undefined;
      for (const nonce of nonces) {
        const report = (error: unknown) =>
          console.warn(
            `file-deleter: settling ${nonce} failed, tried again soon: ${String(error)}`,
          );
        const done = await settle(db, root, nonce).catch((error: unknown) => {
          report(error);
          settleSoon(db, root, nonce, report);
          return 'failed' as const;
        });
        if (done === 'stuck' || (done === 'failed' && held === undefined)) held = done;
      }
      const { path } = args as { path: string };
      // A settle that failed says nothing of where the file is (the move itself may have failed,
      // e.g. the trash was unusable): it is held only if it is not under its name.
      if (held === 'failed') {
        const now = await root.lookup(path).catch(() => undefined);
        if (!now || !('refused' in now && now.missing)) held = undefined;
      }
      // A deletion that committed returned its result: the file is gone as the person asked, its
      // trash entry unlinked later. Anything else, with the file not back under its name, must
      // say so: "changed nothing" or "not deleted" would have the person act on a missing file.
      if ('result' in outcome && (held === undefined || deletedBy(outcome.result)))
        return outcome.result;
      if (held === undefined) throw (outcome as { error: unknown }).error;
      const error = 'error' in outcome ? outcome.error : undefined;
      const fault = faultOf(error);
      if (fault) throw filesUnavailable(fault, path);
      throw heldInTrash(path, held, error);
    },
  };
  return [deleteFile];
}
