import { type BigIntStats, constants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { quoted } from '@mrtr/gate';
import { ErrorCode, McpError } from '@mrtr/wire';
import { at, closeAll, codeOf, DIR_FLAGS, FilesFault } from './fd.js';
import { MAX_NAME_BYTES, shownPath, TRASH_DIR } from './paths.js';

/**
 * The files root itself is not as the server left it (swapped, its trash not
 * a folder, a file on another mount): nothing can be moved safely. `-32603`
 * (HTTP 503) saying so, where a plain error would be a bare 500; thrown
 * before anything moved, so the claim's transaction rolls back.
 */
export function rootBroken(what: string): McpError {
  return new McpError(
    ErrorCode.InternalError,
    `This request changed nothing: ${what}. An operator must put the files root back as the server expects it.`,
  );
}

/**
 * Why `.mrtr-trash` (its `stat`) cannot be trusted, or `undefined`: what the
 * trash holds decides what recovery moves back where, so a folder another
 * user made (before the first start, in a shared root) or may write in
 * could dictate it.
 */
function trashOwnershipProblem(st: { uid: number; mode: number }): string | undefined {
  const owner = process.getuid?.();
  if ((owner === undefined || st.uid === owner) && (st.mode & 0o022) === 0) return undefined;
  return `${TRASH_DIR} in FILES_ROOT must belong to the server's user and be writable by no one else (mode ${(st.mode & 0o777).toString(8)}, owner ${st.uid})`;
}

/** The fault behind each error {@link filesUnavailable} made (an `McpError` subclass would not do: its `instanceof` is a brand check). */
const faults = new WeakMap<object, FilesFault>();

/**
 * `error` worded for the client when it is a {@link FilesFault}: a
 * `-32603` (HTTP 503) saying nothing changed, or, with `heldPath`, that the
 * file is in the trash and not back yet (the deletion did not complete;
 * recovery puts it back). Anything else is returned as it is.
 */
export function filesUnavailable(error: unknown, heldPath?: string): unknown {
  if (!(error instanceof FilesFault)) return error;
  const worded = new McpError(
    ErrorCode.InternalError,
    heldPath === undefined
      ? `This request changed nothing: ${error.message}. Send the same request again once an operator has fixed the files root.`
      : `This request deleted nothing, but ${error.message}, and ${heldPath} could not be put back yet from ${TRASH_DIR}: the server tries again soon and every minute. Send the same confirmation again once it is back.`,
  );
  faults.set(worded, error);
  return worded;
}

/** The {@link FilesFault} that `error` (made by {@link filesUnavailable}) words, if it is one. */
export const faultOf = (error: unknown): FilesFault | undefined =>
  typeof error === 'object' && error !== null ? faults.get(error) : undefined;

/** What the server checked about a file: the question states it, the claim compares it. */
export interface FileFacts {
  /** The path as given, relative to the root. */
  path: string;
  /** Device and inode (decimal): the file's identity. */
  dev: string;
  ino: string;
  /** Size in bytes. */
  size: number;
  /** Modification time, nanoseconds since the epoch (decimal). */
  mtimeNs: string;
  /**
   * Birth time, nanoseconds since the epoch (decimal), or `0` where the file
   * system keeps none. A file system gives a new file the inode number of
   * one just deleted (ext4 does at once), and `cp -p` or `touch -r` gives it
   * the old size and mtime: the birth time alone tells the two apart, and
   * no user can set it.
   */
  birthtimeNs: string;
  /** Other names in the same folder equal to this one but for case or compatibility form. */
  twins: string[];
  /** The name a backup would get (`<name>.bak`, else `<name>.1.bak` … `.9.bak`), or none free. */
  backupName: string | undefined;
}

/** A file found, or why not (`missing` when nothing is at the path). */
export type Lookup = { found: FileFacts } | { refused: string; missing: boolean };

/** Test hooks: `beforeMove` runs in the window between the last check and the rename. */
export interface FilesHooks {
  beforeMove?: () => Promise<void>;
  /** Right after the rename into the trash, before what was moved is checked (tests: the name taken again). */
  afterMove?: () => Promise<void>;
  /** After each look at a path (tests: another instance acts in between). */
  afterLookup?: (path: string, found: Lookup) => Promise<void>;
  /**
   * Act as a file system that keeps no birth time (Node then reports 0, as on
   * ext4 with 128-byte inodes), so that tests reach the deletion count.
   */
  withoutBirthTimes?: boolean;
}

const fold = (name: string) => name.normalize('NFKC').toLowerCase();

/** An open walk to a file's folder: every folder on the way held open, the last one `dir`. */
export interface Walk {
  handles: FileHandle[];
  dir: FileHandle;
  name: string;
  /** The names in `dir`. */
  names: string[];
}

/**
 * One root folder, reached only through directory handles: every folder on
 * a path is opened relative to the one before with `O_NOFOLLOW`, so no
 * symbolic link is ever followed and nothing outside the root is reached.
 * Linux only (it needs `/proc/self/fd`). What goes through the trash is in
 * `trash.ts`.
 */
export class FilesRoot {
  private constructor(
    /** The root's real path (symbolic links resolved once, at start). */
    readonly path: string,
    private readonly id: { dev: bigint; ino: bigint },
    /** Test hooks (see {@link FilesHooks}). */
    readonly hooks: FilesHooks,
  ) {}

  /**
   * Open the root `dir` (which must exist) and make its trash folder.
   * @throws without `/proc/self/fd`, when `dir` is not a folder, or when `dir/.mrtr-trash` is not one.
   */
  static async open(dir: string, hooks: FilesHooks = {}): Promise<FilesRoot> {
    await fsp.access('/proc/self/fd').catch(() => {
      throw new Error('file-deleter needs Linux /proc/self/fd for directory-relative operations');
    });
    const path = await fsp.realpath(dir);
    const st = await fsp.stat(path, { bigint: true });
    if (!st.isDirectory()) throw new Error(`FILES_ROOT ${path} is not a folder`);
    const root = new FilesRoot(path, { dev: st.dev, ino: st.ino }, hooks);
    const handle = await root.#openRoot();
    try {
      await fsp.mkdir(at(handle.fd, TRASH_DIR), { mode: 0o700 }).catch((error) => {
        if (codeOf(error) !== 'EEXIST') throw error;
      });
      // Said for an operator at start: no request is refused yet.
      const trash = await fsp.lstat(at(handle.fd, TRASH_DIR));
      const problem = trash.isDirectory() ? trashOwnershipProblem(trash) : undefined;
      if (problem)
        throw new Error(
          `file-deleter cannot start: ${problem}. Run chmod 700 ${path}/${TRASH_DIR} as the server's user (or chown it to that user), then start again.`,
        );
      await (await root.openTrash(handle)).close();
    } finally {
      await handle.close();
    }
    return root;
  }

  /**
   * Whether `st` is the file `f` describes: same device, inode, size,
   * modification and birth time (ns), and still its only name (a hard link
   * made since would keep the data after the deletion the person confirmed).
   */
  same(
    st: BigIntStats,
    f: Pick<FileFacts, 'dev' | 'ino' | 'size' | 'mtimeNs' | 'birthtimeNs'>,
  ): boolean {
    return (
      st.nlink === 1n &&
      String(st.dev) === f.dev &&
      String(st.ino) === f.ino &&
      Number(st.size) === f.size &&
      String(st.mtimeNs) === f.mtimeNs &&
      this.#born(st) === f.birthtimeNs
    );
  }

  /** Whether two looks found the same file, as {@link same} compares it. */
  sameFacts(a: FileFacts, b: FileFacts): boolean {
    return (
      a.dev === b.dev &&
      a.ino === b.ino &&
      a.size === b.size &&
      a.mtimeNs === b.mtimeNs &&
      a.birthtimeNs === b.birthtimeNs
    );
  }

  #born(st: BigIntStats): string {
    return this.hooks.withoutBirthTimes ? '0' : String(st.birthtimeNs);
  }

  /** Find the regular file at `path` (already checked by `pathProblem`). */
  async lookup(path: string): Promise<Lookup> {
    const found = await this.#lookup(path);
    await this.hooks.afterLookup?.(path, found);
    return found;
  }

  async #lookup(path: string): Promise<Lookup> {
    const walk = await this.walk(path);
    if ('refused' in walk) return walk;
    try {
      return await this.#facts(walk, path);
    } finally {
      await closeAll(walk.handles);
    }
  }

  /** Run `use` with the trash folder open (and the root, checked). */
  async inTrash<T>(use: (trash: FileHandle) => Promise<T>): Promise<T> {
    const root = await this.#openRoot();
    try {
      const trash = await this.openTrash(root);
      try {
        return await use(trash);
      } finally {
        await trash.close();
      }
    } finally {
      await root.close();
    }
  }

  /** The root, checked to be the folder opened at start (not one swapped in at its path since). */
  async #openRoot(): Promise<FileHandle> {
    const handle = await fsp.open(this.path, constants.O_RDONLY | constants.O_DIRECTORY);
    // Closed on every way out but success: a descriptor left to the collector outlives a shortage.
    const st = await handle.stat({ bigint: true }).catch(async (error: unknown) => {
      await handle.close().catch(() => {});
      throw error;
    });
    if (st.dev !== this.id.dev || st.ino !== this.id.ino) {
      await handle.close();
      throw rootBroken(`FILES_ROOT ${this.path} was replaced since the server started`);
    }
    return handle;
  }

  /**
   * Open `.mrtr-trash` in the open root, refusing a link.
   * @throws {McpError} (`rootBroken`) when it is missing, a link or not a folder; the
   *   file system's own error otherwise (out of descriptors, not allowed, …).
   */
  async openTrash(root: FileHandle): Promise<FileHandle> {
    const trash = await fsp.open(at(root.fd, TRASH_DIR), DIR_FLAGS).catch((error) => {
      const code = codeOf(error);
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP')
        throw rootBroken(`${TRASH_DIR} in FILES_ROOT is not a folder (${code})`);
      throw error;
    });
    try {
      const problem = trashOwnershipProblem(await trash.stat());
      if (problem) throw rootBroken(`${problem}; chmod 700 it, owned by the server's user`);
      return trash;
    } catch (error) {
      await trash.close().catch(() => {});
      throw error;
    }
  }

  /** Open every folder of `path` from the root, each relative to the last, refusing links and mounts. */
  async walk(path: string): Promise<Walk | { refused: string; missing: boolean }> {
    const parts = path.split('/');
    const name = parts.pop() as string;
    const handles = [await this.#openRoot()];
    try {
      return await this.#walkFrom(handles, parts, name);
    } catch (error) {
      // An I/O error on the way (readdir, stat): no handle outlives the walk.
      await closeAll(handles);
      throw error;
    }
  }

  async #walkFrom(
    handles: FileHandle[],
    parts: string[],
    name: string,
  ): Promise<Walk | { refused: string; missing: boolean }> {
    const refuse = async (refused: string, missing = false) => {
      await closeAll(handles);
      return { refused, missing };
    };
    for (const [i, folder] of parts.entries()) {
      const here = parts.slice(0, i + 1).join('/');
      const parent = handles.at(-1) as FileHandle;
      if (!(await fsp.readdir(at(parent.fd))).includes(folder))
        return refuse(`there is no folder ${shownPath(here)}`, true);
      let next: FileHandle;
      try {
        next = await fsp.open(at(parent.fd, folder), DIR_FLAGS);
      } catch (error) {
        // O_DIRECTORY | O_NOFOLLOW on a link fails with ELOOP or ENOTDIR, depending on the kernel.
        const link = await fsp.lstat(at(parent.fd, folder)).then(
          (st) => st.isSymbolicLink(),
          () => false,
        );
        const code = codeOf(error);
        if (code === 'ELOOP' || link)
          return refuse(`${shownPath(here)} is a symbolic link, which is never followed`);
        if (code === 'ENOTDIR') return refuse(`${shownPath(here)} is not a folder`);
        if (code === 'ENOENT') return refuse(`there is no folder ${shownPath(here)}`, true);
        throw error;
      }
      handles.push(next);
      if ((await next.stat({ bigint: true })).dev !== this.id.dev)
        return refuse(`${shownPath(here)} is another file system mounted inside the root`);
    }
    const dir = handles.at(-1) as FileHandle;
    return { handles, dir, name, names: await fsp.readdir(at(dir.fd)) };
  }

  async #facts(walk: Walk, path: string): Promise<Lookup> {
    const { dir, name, names } = walk;
    const twins = names.filter((n) => n !== name && fold(n) === fold(name));
    // Exact names only: on a case- or normalization-insensitive file system `Notes.txt` is not `notes.txt`.
    if (!names.includes(name)) {
      // Names read from disk: quoted, as the question quotes them.
      const hint = twins.length
        ? ` (the folder has ${twins.map((t) => quoted(t, MAX_NAME_BYTES)).join(', ')})`
        : '';
      return { refused: `there is no file ${shownPath(path)}${hint}`, missing: true };
    }
    const st = await fsp.lstat(at(dir.fd, name), { bigint: true }).catch((error: unknown) => {
      if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return undefined;
      throw error;
    });
    // `readdir` reads a name that is not valid UTF-8 with U+FFFD in place of its bad bytes, and
    // U+FFFD written back is other bytes: JSON text cannot name such a file.
    if (!st && name.includes('\uFFFD'))
      return {
        refused: `${shownPath(path)} names a file whose name on disk is not valid UTF-8 (shown with U+FFFD); such a name cannot be given as text, so it is not deleted`,
        missing: false,
      };
    if (!st) return { refused: `there is no file ${shownPath(path)}`, missing: true };
    if (st.isSymbolicLink())
      return {
        refused: `${shownPath(path)} is a symbolic link; links are never followed or deleted`,
        missing: false,
      };
    if (!st.isFile())
      return { refused: `${shownPath(path)} is not a regular file`, missing: false };
    // Unlinking one of several names deletes nothing: the question's "cannot be undone" would lie.
    if (st.nlink > 1n)
      return {
        refused: `${shownPath(path)} has ${st.nlink} names (hard links); deleting one would not delete the file, so it is not deleted`,
        missing: false,
      };
    const backupName = [
      `${name}.bak`,
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => `${name}.${i}.bak`),
    ].find((b) => Buffer.byteLength(b) <= MAX_NAME_BYTES && !names.includes(b));
    return {
      found: {
        path,
        dev: String(st.dev),
        ino: String(st.ino),
        size: Number(st.size),
        mtimeNs: String(st.mtimeNs),
        birthtimeNs: this.#born(st),
        twins,
        backupName,
      },
    };
  }
}
