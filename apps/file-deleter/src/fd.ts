import { constants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** Flags to open a folder without following a symbolic link in its last name. */
export const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The path of `name` in the directory open as `fd`. The kernel resolves
 * `/proc/self/fd/<fd>` to that open directory itself (Linux procfs), so an
 * operation on it is relative to the directory we hold, as `openat(2)` and
 * `renameat(2)` are: a rename of a folder on the way, or a symbolic link put
 * in its place, cannot redirect it. `rename`, `link`, `unlink` and `lstat`
 * never follow a symbolic link in the last name.
 */
export const at = (fd: number, name?: string) =>
  name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;

/** The `code` of a Node.js system error (`ENOENT`, `ELOOP`, …). */
export const codeOf = (error: unknown) => (error as NodeJS.ErrnoException)?.code;

/** Create `path` (it must not exist, not even as a link), write `text`, and flush it to disk. */
export async function writeNew(path: string, text: string): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  const handle = await fsp.open(path, flags, 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The text of `path`, or `undefined` when it is missing or a symbolic link. */
export async function readNoFollow(path: string): Promise<string | undefined> {
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW;
  const handle = await fsp.open(path, flags).catch(() => undefined);
  if (!handle) return undefined;
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** Unlink `path` (never following a link); nothing there is fine. */
export async function unlinkIfThere(path: string): Promise<void> {
  await fsp.unlink(path).catch((error) => {
    if (codeOf(error) !== 'ENOENT') throw error;
  });
}

/** Close every handle, last opened first, and empty the list. */
export async function closeAll(handles: FileHandle[]): Promise<void> {
  for (const h of handles.splice(0).reverse()) await h.close().catch(() => {});
}
