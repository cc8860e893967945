import { randomBytes } from 'node:crypto';
import type { SqlDriver, SqlQueryable } from '@mrtr/sql';

/** A note as the tools return it. */
export interface Note {
  id: string;
  workspaceUri: string;
  title: string;
  body: string;
  createdAt: string;
}

interface NoteRow {
  id: string;
  workspace_uri: string;
  title: string;
  body: string;
  created_at: Date | string;
}

const toNote = (r: NoteRow): Note => ({
  id: r.id,
  workspaceUri: r.workspace_uri,
  title: r.title,
  body: r.body,
  createdAt: new Date(r.created_at).toISOString(),
});

/** The demo workspace seeded into a new database. */
export const DEMO_WORKSPACE = 'notes://team';

/**
 * Create the schema if it is missing and, when the database is new, seed the
 * demo workspace with every principal in `members` and four notes. Under an
 * advisory lock: instances starting together on a new database would race
 * (concurrent `CREATE TABLE IF NOT EXISTS` can fail in PostgreSQL).
 */
export async function migrate(db: SqlDriver, members: string[]): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['mrtr-notes-server-migrate']);
    await tx.query(`CREATE TABLE IF NOT EXISTS workspaces (
      uri text PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    await tx.query(`CREATE TABLE IF NOT EXISTS workspace_members (
      workspace_uri text NOT NULL REFERENCES workspaces(uri) ON DELETE CASCADE,
      principal text NOT NULL,
      PRIMARY KEY (workspace_uri, principal))`);
    await tx.query(`CREATE TABLE IF NOT EXISTS notes (
      id text PRIMARY KEY,
      workspace_uri text NOT NULL REFERENCES workspaces(uri) ON DELETE CASCADE,
      title text NOT NULL,
      body text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    await tx.query('CREATE INDEX IF NOT EXISTS notes_by_title ON notes (workspace_uri, title)');
    await tx.query(`CREATE TABLE IF NOT EXISTS notes_schema (
      version integer PRIMARY KEY, seeded_at timestamptz NOT NULL DEFAULT now())`);
    // Version 2: the order notes were created in. created_at alone ties when
    // clock_timestamp() does not advance between two inserts (PGlite's clock
    // often does not), and the tie then fell to the random id, so the seeded
    // "Meeting notes" came in a different order from one database to the next.
    const ordered = await tx.query(
      'INSERT INTO notes_schema (version) VALUES (2) ON CONFLICT DO NOTHING RETURNING version',
    );
    if (ordered.rows.length > 0)
      await tx.query('ALTER TABLE notes ADD COLUMN IF NOT EXISTS seq bigserial');
    const inserted = await tx.query(
      'INSERT INTO notes_schema (version) VALUES (1) ON CONFLICT DO NOTHING RETURNING version',
    );
    if (inserted.rows.length === 0) return; // not a new database
    await tx.query('INSERT INTO workspaces (uri) VALUES ($1) ON CONFLICT DO NOTHING', [
      DEMO_WORKSPACE,
    ]);
    for (const m of members) {
      await tx.query(
        'INSERT INTO workspace_members (workspace_uri, principal) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [DEMO_WORKSPACE, m],
      );
    }
    const seed: [string, string][] = [
      ['Meeting notes', 'Kick-off: scope, owners, dates.'],
      ['Meeting notes', 'Weekly sync: the migration slipped a week.'],
      ['Meeting notes', 'Retro: fewer meetings.'],
      ['Roadmap', 'Q1: confirmations everywhere.'],
    ];
    for (const [title, body] of seed) await insertNote(tx, DEMO_WORKSPACE, title, body);
  });
}

async function insertNote(tx: SqlQueryable, workspaceUri: string, title: string, body: string) {
  const id = `note-${randomBytes(5).toString('hex')}`;
  const { rows } = await tx.query<NoteRow>(
    'INSERT INTO notes (id, workspace_uri, title, body) VALUES ($1, $2, $3, $4) RETURNING *',
    [id, workspaceUri, title, body],
  );
  return toNote(rows[0] as NoteRow);
}

/** Whether `principal` is a member of `workspaceUri`. */
export async function isMember(q: SqlQueryable, principal: string, workspaceUri: string) {
  const { rows } = await q.query(
    'SELECT 1 FROM workspace_members WHERE workspace_uri = $1 AND principal = $2',
    [workspaceUri, principal],
  );
  return rows.length > 0;
}

/**
 * Create a note. A new workspace is created with the caller as its member;
 * an existing one must have the caller as a member.
 * @returns the note, or `undefined` when the workspace belongs to others.
 */
export async function createNote(
  db: SqlDriver,
  principal: string,
  workspaceUri: string,
  title: string,
  body: string,
): Promise<Note | undefined> {
  return db.transaction(async (tx) => {
    const created = await tx.query(
      'INSERT INTO workspaces (uri) VALUES ($1) ON CONFLICT DO NOTHING RETURNING uri',
      [workspaceUri],
    );
    if (created.rows.length > 0) {
      await tx.query('INSERT INTO workspace_members (workspace_uri, principal) VALUES ($1, $2)', [
        workspaceUri,
        principal,
      ]);
    } else if (!(await isMember(tx, principal, workspaceUri))) {
      return undefined;
    }
    return insertNote(tx, workspaceUri, title, body);
  });
}

/** The notes of a workspace, oldest first. */
export async function listNotes(q: SqlQueryable, workspaceUri: string): Promise<Note[]> {
  const { rows } = await q.query<NoteRow>(
    'SELECT * FROM notes WHERE workspace_uri = $1 ORDER BY created_at, seq',
    [workspaceUri],
  );
  return rows.map(toNote);
}

/**
 * The notes of a workspace whose title is exactly `title`; with `lock`, their
 * rows stay locked until the transaction `q` ends (`FOR UPDATE`).
 */
export async function findByTitle(
  q: SqlQueryable,
  workspaceUri: string,
  title: string,
  lock = false,
) {
  const { rows } = await q.query<NoteRow>(
    `SELECT * FROM notes WHERE workspace_uri = $1 AND title = $2 ORDER BY created_at, seq${lock ? ' FOR UPDATE' : ''}`,
    [workspaceUri, title],
  );
  return rows.map(toNote);
}

/** Delete one note by id. */
export async function deleteNote(tx: SqlQueryable, id: string): Promise<number> {
  const result = (await tx.query('DELETE FROM notes WHERE id = $1', [id])) as {
    affectedRows?: number;
    rowCount?: number | null;
  };
  return result.affectedRows ?? result.rowCount ?? 0;
}
