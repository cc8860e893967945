import type { Database, Queryable } from './db.js';
import { FilesFault } from './fd.js';
import type { FileFacts, FilesRoot } from './root.js';
import { finish, restore, trashNonces } from './trash.js';

/**
 * Table `file_deletions`: one row per deletion, keyed by the ticket nonce,
 * written in the transaction that claims the nonce. A row means the
 * deletion committed; no row means it did not, whatever the trash holds.
 * Created under an advisory lock: instances starting together on a new
 * database would race (concurrent `CREATE TABLE IF NOT EXISTS` can fail).
 */
export async function migrateDeletions(db: Database): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['mrtr-file-deleter-migrate']);
    await tx.query(`CREATE TABLE IF NOT EXISTS file_deletions (
      nonce text PRIMARY KEY,
      path text NOT NULL,
      principal text NOT NULL,
      reason text NOT NULL,
      backup text,
      dev text NOT NULL,
      ino text NOT NULL,
      size bigint NOT NULL,
      mtime_ns text NOT NULL,
      deleted_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    )`);
    // Inode numbers are reused as soon as a file is gone: see deletionsOf.
    await tx.query(
      'CREATE INDEX IF NOT EXISTS file_deletions_by_inode ON file_deletions (dev, ino)',
    );
  });
}

/** Advisory-lock class of the nonce locks (`pg_advisory_xact_lock(class, hashtext(nonce))`). */
const NONCE_LOCK = 0x6d72_7466; // "mrtf"

/**
 * Hold the nonce's lock until `tx` ends: the deletion's transaction takes it
 * before it moves anything, and {@link settle} takes it before it looks, so
 * settling waits for a deletion in flight on any instance and then sees
 * whether it committed.
 */
export async function lockNonce(tx: Queryable, nonce: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [NONCE_LOCK, nonce]);
}

/** Advisory-lock class of the file identity locks (`pg_advisory_xact_lock(class, hashtext('dev:ino'))`). */
const IDENTITY_LOCK = 0x6d72_7469; // "mrti"

/**
 * Hold the lock of the file identity `dev`/`ino` until `tx` ends: a claim
 * takes it before it counts the deletions of that identity, so two tickets
 * for one file are carried out one after the other. The second then counts
 * the first's deletion, and a look-alike that took the inode in between is
 * not taken for the file it was asked about.
 */
export async function lockIdentity(tx: Queryable, dev: string, ino: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
    IDENTITY_LOCK,
    `${dev}:${ino}`,
  ]);
}

/**
 * How many deletions of the file with identity `dev`/`ino` have committed.
 * A file system gives a new file the inode number of one just deleted (ext4
 * does at once), so a file of the same size and modification time (`cp -p`,
 * `rsync -t`) can take the place and identity of one a person confirmed
 * deleting; a count that grew since the question tells it is another file.
 */
export async function deletionsOf(q: Queryable, dev: string, ino: string): Promise<number> {
  const { rows } = await q.query<{ n: string | number }>(
    'SELECT count(*) AS n FROM file_deletions WHERE dev = $1 AND ino = $2',
    [dev, ino],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Record the deletion of `file` under `nonce`, in the claim's transaction `tx`. */
export async function recordDeletion(
  tx: Queryable,
  nonce: string,
  file: FileFacts,
  by: { principal: string; reason: string; backup: string | undefined },
): Promise<void> {
  await tx.query(
    `INSERT INTO file_deletions (nonce, path, principal, reason, backup, dev, ino, size, mtime_ns)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      nonce,
      file.path,
      by.principal,
      // The audit trail keeps the answer exactly; a text column cannot hold U+0000.
      by.reason.replaceAll('\u0000', '\uFFFD'),
      by.backup ?? null,
      file.dev,
      file.ino,
      file.size,
      file.mtimeNs,
    ],
  );
}

/**
 * Finish what a deletion under `nonce` left in the trash: committed (its row
 * exists) → unlink `.mrtr-trash/<nonce>`; rolled back or never committed
 * (no row) → put the file back at its path. Waits for a deletion of that
 * nonce still in flight. Idempotent.
 * @returns what was done: `stuck` when the file cannot be put back (the reason is logged).
 * @throws {FilesFault} when the file system refuses for now, or the database's error.
 */
export async function settle(
  db: Database,
  root: FilesRoot,
  nonce: string,
): Promise<'finished' | 'restored' | 'stuck'> {
  return db.transaction(async (tx) => {
    await lockNonce(tx, nonce);
    const row = await tx.query('SELECT 1 FROM file_deletions WHERE nonce = $1', [nonce]);
    if (row.rows.length === 0) {
      const restored = await restore(root, nonce);
      if (restored === true) return 'restored';
      console.warn(
        `file-deleter: ${nonce} was not deleted but cannot be put back: ${restored}; it stays in .mrtr-trash until an operator puts it back`,
      );
      return 'stuck';
    }
    await finish(root, nonce);
    await tx.query(
      'UPDATE file_deletions SET finished_at = now() WHERE nonce = $1 AND finished_at IS NULL',
      [nonce],
    );
    return 'finished';
  });
}

/** When a settle that failed (the database did not answer) is tried again, ms after the failure. */
export const RESETTLE_AFTER_MS = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000] as const;

/**
 * {@link settle}, tried again in the background after each of
 * {@link RESETTLE_AFTER_MS} while it fails: a deletion whose transaction the
 * database rolled back after a stall would otherwise leave the file in the
 * trash until the next {@link recover} (a minute), and a retry of its
 * confirmation would find the file gone. The timers do not keep the process alive.
 */
export function settleSoon(
  db: Database,
  root: FilesRoot,
  nonce: string,
  report: (error: unknown) => void,
  attempt = 0,
): void {
  const wait = RESETTLE_AFTER_MS[attempt];
  if (wait === undefined) return;
  setTimeout(() => {
    settle(db, root, nonce).catch((error: unknown) => {
      report(error);
      settleSoon(db, root, nonce, report, attempt + 1);
    });
  }, wait).unref();
}

/**
 * Settle everything in the trash: at start (a crash may have left files
 * there) and every minute.
 * @returns the nonces settled, by outcome; `later` for those the file system refused for now.
 * @throws the database's error (the rest is left for the next try).
 */
export async function recover(
  db: Database,
  root: FilesRoot,
): Promise<Record<'finished' | 'restored' | 'stuck' | 'later', string[]>> {
  const done = {
    finished: [] as string[],
    restored: [] as string[],
    stuck: [] as string[],
    later: [] as string[],
  };
  for (const nonce of await trashNonces(root)) {
    const outcome = await settle(db, root, nonce).catch((error: unknown) => {
      // The file system refuses this one for now: the others are still settled; the next sweep retries.
      if (!(error instanceof FilesFault)) throw error;
      console.warn(`file-deleter: settling ${nonce} failed, tried again later: ${error.message}`);
      return 'later' as const;
    });
    done[outcome].push(nonce);
  }
  return done;
}

/**
 * Settle the deletions under `nonces` (the unsettled deletions of one file,
 * from `trashNoncesOf`): waits for one still in flight.
 * @returns `restored` when the file was put back at its path, `gone` when a
 * deletion of it committed, `stuck` when it cannot be put back (its name
 * taken, its folder gone), `none` when `nonces` is empty.
 * @throws {FilesFault} when the file system refuses for now, or the database's error.
 */
export async function settleFile(
  db: Database,
  root: FilesRoot,
  nonces: string[],
): Promise<'restored' | 'gone' | 'stuck' | 'none'> {
  let outcome: 'restored' | 'gone' | 'stuck' | 'none' = 'none';
  for (const nonce of nonces) {
    const done = await settle(db, root, nonce);
    if (done === 'finished') outcome = 'gone';
    else if (outcome === 'none') outcome = done;
  }
  return outcome;
}
