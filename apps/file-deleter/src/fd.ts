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

/** What an operator reads for the errors of a file system that only they can fix. */
const WORDS: Record<string, string> = {
  ENOSPC: 'no space is left on the file system',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'the server is not allowed to',
  EPERM: 'the server is not allowed to',
  EMFILE: 'the server has too many files open',
  ENFILE: 'the system has too many files open',
  EMLINK: 'the file has too many links',
  EIO: 'the disk reported an input/output error',
  ENOMEM: 'the system is out of memory',
};

/**
 * An error of the file system under the files root (full, read-only, not
 * allowed, out of descriptors, an I/O error): the operation stopped, and
 * nothing about the request was wrong. `message` names the step and says
 * why in words; `cause` is Node.js's error, whose message holds internal
 * `/proc/self/fd` paths and stays off the wire.
 */
export class FilesFault extends Error {
  override readonly name = 'FilesFault';
  /** The system error code (`ENOSPC`, `EROFS`, …). */
  readonly code: string;

  /** @param step what was being done, e.g. `moving the file aside`. */
  constructor(step: string, cause: unknown) {
    const code = codeOf(cause) ?? 'EIO';
    super(`${step} failed: ${WORDS[code] ?? 'the file system refused'} (${code})`);
    this.code = code;
    Object.defineProperty(this, 'cause', { value: cause, enumerable: false });
  }
}

/**
 * `error` as a {@link FilesFault} of `step` when it is a Node.js system
 * error (a string `code` and `syscall`); anything else (an `McpError`
 * already worded, a bug) is returned as it is.
 */
export function asFilesFault(step: string, error: unknown): unknown {
  if (error instanceof FilesFault) return error;
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  return typeof code === 'string' && typeof syscall === 'string'
    ? new FilesFault(step, error)
    : error;
}

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

/** Longest file {@link readNoFollow} reads, bytes: an intent is a few hundred; a longer file is none of ours. */
export const MAX_READ_BYTES = 64 * 1024;

/**
 * The text of `path`, or `undefined` when it is missing, a symbolic link,
 * not a regular file (a FIFO, a socket, a device) or longer than
 * {@link MAX_READ_BYTES}. Opened without blocking: a FIFO put in the trash
 * would otherwise hold the open until someone writes to it, and with it the
 * recovery's transaction and every request behind it.
 */
export async function readNoFollow(path: string): Promise<string | undefined> {
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  const handle = await fsp.open(path, flags).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > MAX_READ_BYTES) return undefined;
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
