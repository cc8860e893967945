import { type BigIntStats, constants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { MAX_NAME_BYTES, TRASH_DIR } from './paths.js';

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The path of `name` in the directory open as `fd`. The kernel resolves
 * `/proc/self/fd/<fd>` to that open directory itself (Linux procfs), so an
 * operation on it is relative to the directory we hold, as `openat(2)` and
 * `renameat(2)` are: a rename of a folder on the way, or a symbolic link put
 * in its place, cannot redirect it. `rename`, `link`, `unlink` and `lstat`
 * never follow a symbolic link in the last name.
 */
const at = (fd: number, name?: string) =>
  name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;

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
  /** Other names in the same folder equal to this one but for case or compatibility form. */
  twins: string[];
  /** The name a backup would get (`<name>.bak`, else `<name>.1.bak` … `.9.bak`), or none free. */
  backupName: string | undefined;
}

/** A file found, or why not (`missing` when nothing is at the path). */
export type Lookup = { found: FileFacts } | { refused: string; missing: boolean };

/** Test hooks: run in the window between the last check and the rename. */
export interface FilesHooks {
  beforeMove?: () => Promise<void>;
}

/** What is kept beside a file moved into the trash, to put it back if its transaction rolls back. */
interface Intent {
  path: string;
  backup?: string;
  dev: string;
  ino: string;
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException)?.code;
const same = (a: BigIntStats, f: Pick<FileFacts, 'dev' | 'ino' | 'size' | 'mtimeNs'>) =>
  String(a.dev) === f.dev &&
  String(a.ino) === f.ino &&
  Number(a.size) === f.size &&
  String(a.mtimeNs) === f.mtimeNs;
const fold = (name: string) => name.normalize('NFKC').toLowerCase();

/** An open walk to a file's folder: every folder on the way held open, the last one `dir`. */
interface Walk {
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
 * Linux only (it needs `/proc/self/fd`).
 */
export class FilesRoot {
  private constructor(
    /** The root's real path (symbolic links resolved once, at start). */
    readonly path: string,
    private readonly id: { dev: bigint; ino: bigint },
    private readonly hooks: FilesHooks,
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
      await (await root.#openTrash(handle)).close();
    } finally {
      await handle.close();
    }
    return root;
  }

  /** Find the regular file at `path` (already checked by `pathProblem`). */
  async lookup(path: string): Promise<Lookup> {
    const walk = await this.#walk(path);
    if ('refused' in walk) return walk;
    try {
      return await this.#facts(walk, path);
    } finally {
      await closeAll(walk.handles);
    }
  }

  /**
   * Move the file at `expected.path` into `.mrtr-trash/<nonce>` if it is
   * still the file `expected` describes; with `backup`, also link it as
   * that name beside where it was. Writes `.mrtr-trash/<nonce>.json` first,
   * so that {@link restore} can put it back.
   * @returns `moved`, or `changed` when it is gone or not the same file (nothing moved then).
   * @throws on an I/O error; whatever was moved is then still in the trash, to be restored.
   */
  async moveToTrash(
    expected: FileFacts,
    nonce: string,
    backup?: string,
  ): Promise<'moved' | 'changed'> {
    const walk = await this.#walk(expected.path);
    if ('refused' in walk) return 'changed';
    try {
      const { dir, name } = walk;
      const now = await fsp.lstat(at(dir.fd, name), { bigint: true }).catch(() => undefined);
      if (!now || !now.isFile() || !same(now, expected)) return 'changed';
      await this.hooks.beforeMove?.();
      const trash = await this.#openTrash(walk.handles[0] as FileHandle);
      try {
        await fsp.lstat(at(trash.fd, nonce)).then(
          () => {
            throw new Error(`${TRASH_DIR}/${nonce} already exists`);
          },
          () => {},
        );
        const intent: Intent = { path: expected.path, dev: expected.dev, ino: expected.ino };
        if (backup) intent.backup = backup;
        await writeNew(at(trash.fd, `${nonce}.json`), JSON.stringify(intent));
        await fsp.rename(at(dir.fd, name), at(trash.fd, nonce));
        // Whatever was at the name went: check it is the file checked, else put it back.
        const moved = await fsp.lstat(at(trash.fd, nonce), { bigint: true });
        if (!moved.isFile() || !same(moved, expected)) {
          await putBack(trash, nonce, dir, name);
          return 'changed';
        }
        if (backup) {
          try {
            await fsp.link(at(trash.fd, nonce), at(dir.fd, backup));
          } catch (error) {
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

  /** After a committed deletion: unlink `.mrtr-trash/<nonce>` and its intent (either may be gone already). */
  async finish(nonce: string): Promise<void> {
    await this.#inTrash(async (trash) => {
      await unlinkIfThere(at(trash.fd, nonce));
      await unlinkIfThere(at(trash.fd, `${nonce}.json`));
    });
  }

  /**
   * After a rolled-back deletion: put `.mrtr-trash/<nonce>` back at its path
   * (never over a file now there) and drop the backup link made for it.
   * @returns `false` when it could not be put back (it stays in the trash, with its intent).
   */
  async restore(nonce: string): Promise<boolean> {
    return this.#inTrash(async (trash) => {
      const text = await readNoFollow(at(trash.fd, `${nonce}.json`));
      const entry = await fsp.lstat(at(trash.fd, nonce), { bigint: true }).catch(() => undefined);
      if (text === undefined || entry === undefined) {
        if (entry === undefined) await unlinkIfThere(at(trash.fd, `${nonce}.json`));
        return entry === undefined;
      }
      const intent = JSON.parse(text) as Intent;
      const walk = await this.#walk(intent.path);
      if ('refused' in walk) return false;
      try {
        const back = await fsp.link(at(trash.fd, nonce), at(walk.dir.fd, walk.name)).then(
          () => true,
          () => false,
        );
        if (!back) return false;
        if (intent.backup) {
          const bak = await fsp.lstat(at(walk.dir.fd, intent.backup), { bigint: true });
          if (String(bak.ino) === intent.ino && String(bak.dev) === intent.dev)
            await unlinkIfThere(at(walk.dir.fd, intent.backup));
        }
        await unlinkIfThere(at(trash.fd, nonce));
        await unlinkIfThere(at(trash.fd, `${nonce}.json`));
        return true;
      } finally {
        await closeAll(walk.handles);
      }
    });
  }

  /** The nonces with something in the trash (a file, an intent, or both). */
  async trashNonces(): Promise<string[]> {
    const names = await this.#inTrash((trash) => fsp.readdir(at(trash.fd)));
    const nonces = names
      .map((n) => n.replace(/\.json$/, ''))
      .filter((n) => /^[\w-]{16,64}$/.test(n));
    return [...new Set(nonces)];
  }

  async #inTrash<T>(use: (trash: FileHandle) => Promise<T>): Promise<T> {
    const root = await this.#openRoot();
    try {
      const trash = await this.#openTrash(root);
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
    const st = await handle.stat({ bigint: true });
    if (st.dev !== this.id.dev || st.ino !== this.id.ino) {
      await handle.close();
      throw new Error(`FILES_ROOT ${this.path} was replaced since the server started`);
    }
    return handle;
  }

  async #openTrash(root: FileHandle): Promise<FileHandle> {
    return fsp.open(at(root.fd, TRASH_DIR), DIR_FLAGS).catch((error) => {
      throw new Error(`${TRASH_DIR} in FILES_ROOT must be a folder (${codeOf(error)})`);
    });
  }

  /** Open every folder of `path` from the root, each relative to the last, refusing links and mounts. */
  async #walk(path: string): Promise<Walk | { refused: string; missing: boolean }> {
    const parts = path.split('/');
    const name = parts.pop() as string;
    const handles = [await this.#openRoot()];
    const refuse = async (refused: string, missing = false) => {
      await closeAll(handles);
      return { refused, missing };
    };
    for (const [i, folder] of parts.entries()) {
      const here = parts.slice(0, i + 1).join('/');
      const parent = handles.at(-1) as FileHandle;
      if (!(await fsp.readdir(at(parent.fd))).includes(folder))
        return refuse(`there is no folder ${here}`, true);
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
          return refuse(`${here} is a symbolic link, which is never followed`);
        if (code === 'ENOTDIR') return refuse(`${here} is not a folder`);
        if (code === 'ENOENT') return refuse(`there is no folder ${here}`, true);
        await closeAll(handles);
        throw error;
      }
      handles.push(next);
      if ((await next.stat({ bigint: true })).dev !== this.id.dev)
        return refuse(`${here} is another file system mounted inside the root`);
    }
    const dir = handles.at(-1) as FileHandle;
    return { handles, dir, name, names: await fsp.readdir(at(dir.fd)) };
  }

  async #facts(walk: Walk, path: string): Promise<Lookup> {
    const { dir, name, names } = walk;
    const twins = names.filter((n) => n !== name && fold(n) === fold(name));
    // Exact names only: on a case- or normalization-insensitive file system `Notes.txt` is not `notes.txt`.
    if (!names.includes(name)) {
      const hint = twins.length ? ` (the folder has ${twins.join(', ')})` : '';
      return { refused: `there is no file ${path}${hint}`, missing: true };
    }
    const st = await fsp.lstat(at(dir.fd, name), { bigint: true }).catch(() => undefined);
    if (!st) return { refused: `there is no file ${path}`, missing: true };
    if (st.isSymbolicLink())
      return {
        refused: `${path} is a symbolic link; links are never followed or deleted`,
        missing: false,
      };
    if (!st.isFile()) return { refused: `${path} is not a regular file`, missing: false };
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
        twins,
        backupName,
      },
    };
  }
}

/** Put a wrongly moved entry back at `name` (never over one now there); it stays in the trash if it cannot. */
async function putBack(trash: FileHandle, nonce: string, dir: FileHandle, name: string) {
  try {
    await fsp.link(at(trash.fd, nonce), at(dir.fd, name));
  } catch (error) {
    // A folder cannot be hard-linked: rename it back, only if the name is still free.
    const free = await fsp.lstat(at(dir.fd, name)).then(
      () => false,
      () => true,
    );
    if (codeOf(error) !== 'EPERM' || !free) {
      console.warn(`could not put back ${name}: it stays in ${TRASH_DIR}/${nonce}`);
      return;
    }
    await fsp.rename(at(trash.fd, nonce), at(dir.fd, name));
  }
  await unlinkIfThere(at(trash.fd, nonce));
  await unlinkIfThere(at(trash.fd, `${nonce}.json`));
}

async function writeNew(path: string, text: string) {
  const handle = await fsp.open(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
    0o600,
  );
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function readNoFollow(path: string): Promise<string | undefined> {
  const handle = await fsp
    .open(path, constants.O_RDONLY | constants.O_NOFOLLOW)
    .catch(() => undefined);
  if (!handle) return undefined;
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

async function unlinkIfThere(path: string) {
  await fsp.unlink(path).catch((error) => {
    if (codeOf(error) !== 'ENOENT') throw error;
  });
}

async function closeAll(handles: FileHandle[]) {
  for (const h of handles.splice(0)) await h.close().catch(() => {});
}
