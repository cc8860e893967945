import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { shownText } from '@mrtr/wire';
import { asFilesFault, at, closeAll, codeOf, readNoFollow, unlinkIfThere, writeNew } from './fd.js';
import { TRASH_DIR } from './paths.js';
import { type FileFacts, type FilesRoot, rootBroken } from './root.js';

/** What is kept beside a file moved into the trash, to put it back if its transaction rolls back. */
interface Intent {
  path: string;
  backup?: string;
  dev: string;
  ino: string;
}

/**
 * Move the file at `expected.path` into `.mrtr-trash/<nonce>` if it is
 * still the file `expected` describes; with `backup`, also link it as
 * that name beside where it was. Writes `.mrtr-trash/<nonce>.json` first,
 * so that {@link restore} can put it back.
 * @returns `moved`, or `changed` when it is gone or not the same file (nothing moved then).
 * @throws on an I/O error; whatever was moved is then still in the trash, to be restored.
 */
export async function moveToTrash(
  root: FilesRoot,
  expected: FileFacts,
  nonce: string,
  backup?: string,
): Promise<'moved' | 'changed'> {
  const walk = await root.walk(expected.path);
  if ('refused' in walk) return 'changed';
  try {
    const { dir, name } = walk;
    const now = await fsp.lstat(at(dir.fd, name), { bigint: true }).catch(() => undefined);
    if (!now || !now.isFile() || !root.same(now, expected)) return 'changed';
    await root.hooks.beforeMove?.();
    const trash = await root.openTrash(walk.handles[0] as FileHandle);
    try {
      await fsp.lstat(at(trash.fd, nonce)).then(
        () => {
          throw new Error(`${TRASH_DIR}/${nonce} already exists`);
        },
        () => {},
      );
      const intent: Intent = { path: expected.path, dev: expected.dev, ino: expected.ino };
      if (backup) intent.backup = backup;
      // An intent with no entry beside it: a process died between writing it and the move, so
      // nothing moved. This request holds the nonce's claim: it is this confirmation's to replace.
      await unlinkIfThere(at(trash.fd, `${nonce}.json`));
      await writeNew(at(trash.fd, `${nonce}.json`), JSON.stringify(intent));
      const renamed = await fsp.rename(at(dir.fd, name), at(trash.fd, nonce)).then(
        () => true as const,
        async (error: unknown) => {
          const code = codeOf(error);
          // The name went since the check (another request deleted it, or `rm`, or its folder was
          // removed), and may hold another file by now: nothing moved, and what is there is not
          // the file checked. Only the checked file still there says the trash itself is missing.
          const gone =
            code === 'ENOENT' &&
            (await fsp.lstat(at(dir.fd, name), { bigint: true }).then(
              (st) => !st.isFile() || !root.same(st, expected),
              (e: unknown) => codeOf(e) === 'ENOENT',
            ));
          // A bind mount of the same file system passes the walk's device check; the rename does not.
          if (!gone && code !== 'EXDEV' && code !== 'EBUSY') throw error;
          await fsp.unlink(at(trash.fd, `${nonce}.json`)).catch(() => {}); // nothing moved
          if (gone) return 'changed' as const;
          throw rootBroken(`${expected.path} is a mount point or on another file system (${code})`);
        },
      );
      if (renamed === 'changed') return 'changed';
      await root.hooks.afterMove?.();
      // Whatever was at the name went: check it is the file checked, else put it back.
      const moved = await fsp.lstat(at(trash.fd, nonce), { bigint: true });
      if (!moved.isFile() || !root.same(moved, expected)) {
        // Another file took the name between the check and the rename. Its intent names it, not
        // the file checked: should it stay (its name taken again), nothing may read it as the
        // file a person confirmed.
        const other: Intent = {
          path: expected.path,
          dev: String(moved.dev),
          ino: String(moved.ino),
        };
        // Whole or not at all (a new file renamed over it, synced): a crash mid-write keeps the
        // intent written before the move, which still names the path. The trash scan reads no
        // `.json.tmp`.
        const tmp = `${nonce}.json.tmp`;
        await unlinkIfThere(at(trash.fd, tmp))
          .then(() => writeNew(at(trash.fd, tmp), JSON.stringify(other)))
          .then(() => fsp.rename(at(trash.fd, tmp), at(trash.fd, `${nonce}.json`)))
          .then(() => trash.sync())
          .catch(() => {});
        await putBack(trash, nonce, dir, name);
        return 'changed';
      }
      if (backup) {
        try {
          await fsp.link(at(trash.fd, nonce), at(dir.fd, backup));
        } catch (error) {
          // The backup's name taken since the check, or no room for its link: back where it was.
          await putBack(trash, nonce, dir, name);
          if (codeOf(error) === 'EEXIST') return 'changed';
          throw error;
        }
      }
      await trash.sync();
      await dir.sync();
      return 'moved';
    } finally {
      await trash.close();
    }
  } finally {
    await closeAll(walk.handles);
  }
}

/**
 * After a committed deletion: unlink `.mrtr-trash/<nonce>` and its intent (either may be gone already).
 * @throws {FilesFault} when the file system refuses for now; a later try finishes it.
 */
export async function finish(root: FilesRoot, nonce: string): Promise<void> {
  await root
    .inTrash(async (trash) => {
      await unlinkIfThere(at(trash.fd, nonce));
      await unlinkIfThere(at(trash.fd, `${nonce}.json`));
    })
    .catch((error: unknown) => {
      throw asFilesFault('emptying the trash', error);
    });
}

/**
 * After a rolled-back deletion: put `.mrtr-trash/<nonce>` back at its path
 * (never over a file now there) and drop the backup link made for it.
 * @returns `true` when it is back (or nothing was moved), else why it stays in
 *   the trash, with its intent (its name taken, its folder gone, its intent lost).
 * @throws {FilesFault} when the file system refuses for now (full, read-only,
 *   out of descriptors): nothing is lost, and a later try can put it back.
 */
export async function restore(root: FilesRoot, nonce: string): Promise<true | string> {
  try {
    return await root.inTrash(async (trash) => {
      const text = await readNoFollow(at(trash.fd, `${nonce}.json`));
      const entry = await fsp.lstat(at(trash.fd, nonce), { bigint: true }).catch(() => undefined);
      if (entry === undefined) {
        // Nothing was moved, or it was put back already: only the intent is left. One that cannot
        // be removed now (a read-only file system) holds no file; the next recovery removes it.
        await unlinkIfThere(at(trash.fd, `${nonce}.json`)).catch(() => {});
        return true;
      }
      // Where it came from is unknown: it stays.
      if (text === undefined) return `its record ${TRASH_DIR}/${nonce}.json is missing`;
      let intent: Intent;
      try {
        intent = JSON.parse(text) as Intent;
      } catch {
        return `its record ${TRASH_DIR}/${nonce}.json does not parse`;
      }
      const walk = await root.walk(intent.path);
      if ('refused' in walk) return `its folder cannot be reached (${walk.refused})`;
      try {
        if ((await relink(trash, nonce, walk.dir, walk.name)) === 'taken')
          return `its name ${shownText(intent.path, 256)} is taken by another file`;
        if (intent.backup) {
          const bak = await fsp
            .lstat(at(walk.dir.fd, intent.backup), { bigint: true })
            .catch(() => undefined);
          // Only the link made for this deletion (same inode), never a file that took the name since.
          if (bak && String(bak.ino) === intent.ino && String(bak.dev) === intent.dev)
            await unlinkIfThere(at(walk.dir.fd, intent.backup));
        }
        await unlinkIfThere(at(trash.fd, nonce));
        await unlinkIfThere(at(trash.fd, `${nonce}.json`));
        return true;
      } finally {
        await closeAll(walk.handles);
      }
    });
  } catch (error) {
    throw asFilesFault('putting the file back', error);
  }
}

/**
 * The nonces whose trash entry is the file `path` (as its intent says), of
 * identity `dev`/`ino` when given: a deletion of that very file, or of any
 * file at `path`, that has not settled.
 */
export async function trashNoncesOf(
  root: FilesRoot,
  path: string,
  dev?: string,
  ino?: string,
): Promise<string[]> {
  const found: string[] = [];
  for (const nonce of await trashNonces(root)) {
    const text = await root.inTrash((trash) => readNoFollow(at(trash.fd, `${nonce}.json`)));
    if (text === undefined) continue;
    try {
      const intent = JSON.parse(text) as Intent;
      if (intent.path !== path) continue;
      if (dev === undefined || (intent.dev === dev && intent.ino === ino)) found.push(nonce);
    } catch {
      // an intent that does not parse names no file
    }
  }
  return found;
}

/** The nonces with something in the trash (a file, an intent, or both). */
export async function trashNonces(root: FilesRoot): Promise<string[]> {
  const names = await root.inTrash((trash) => fsp.readdir(at(trash.fd)));
  const nonces = names.map((n) => n.replace(/\.json$/, '')).filter((n) => /^[\w-]{16,64}$/.test(n));
  return [...new Set(nonces)];
}

/** Put a wrongly moved entry back at `name` (never over one now there); it stays in the trash if it cannot. */
async function putBack(trash: FileHandle, nonce: string, dir: FileHandle, name: string) {
  const back = await relink(trash, nonce, dir, name).catch((error: unknown) => codeOf(error));
  if (back !== 'back') {
    // The name is read from disk: a log line shows it as text, not as terminal controls. Recovery
    // (`settle`, then every minute) tries again from the intent kept beside it.
    console.warn(
      `could not put back ${shownText(name, 256)} (${back === 'taken' ? 'its name is taken' : back}): it stays in ${TRASH_DIR}/${nonce}`,
    );
    return;
  }
  await unlinkIfThere(at(trash.fd, nonce));
  await unlinkIfThere(at(trash.fd, `${nonce}.json`));
}

/**
 * Give the trash entry `nonce` its name `name` in `dir` again, never over a
 * file now there: a `link` (which refuses a name taken), else, when the name
 * is free, a `rename` (a folder cannot be linked, and a full file system may
 * have no room for one more link where a rename needs none).
 * @returns `back` (also when it was back already: a put-back stopped between
 *   its link and its unlink left the file under both names), or `taken` when
 *   another file holds the name.
 * @throws the file system's error when it can be done neither way now.
 */
async function relink(
  trash: FileHandle,
  nonce: string,
  dir: FileHandle,
  name: string,
): Promise<'back' | 'taken'> {
  const from = at(trash.fd, nonce);
  const to = at(dir.fd, name);
  try {
    await fsp.link(from, to);
    return 'back';
  } catch (error) {
    const entry = await fsp.lstat(from, { bigint: true }).catch(() => undefined);
    if (entry && (await sameFile(entry, to))) return 'back';
    const free = await fsp.lstat(to).then(
      () => false,
      (missing: unknown) => codeOf(missing) === 'ENOENT',
    );
    if (!free) {
      if (codeOf(error) === 'EEXIST') return 'taken';
      throw error;
    }
    await fsp.rename(from, to);
    return 'back';
  }
}

/** Whether the name at `path` is the very file `entry` describes (same device and inode), not one that took the name. */
async function sameFile(entry: { dev: bigint; ino: bigint }, path: string): Promise<boolean> {
  const there = await fsp.lstat(path, { bigint: true }).catch(() => undefined);
  if (!there?.isFile()) return false;
  return there.dev === entry.dev && there.ino === entry.ino;
}
