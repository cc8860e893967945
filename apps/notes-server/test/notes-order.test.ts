/**
 * The README's terminal walk-through picks "the second note" of the seeded
 * "Meeting notes", so the notes must come in the order they were created on
 * every new database, and on one made before notes had an insertion order.
 * created_at alone ties in PGlite, and the tie fell to the random id.
 */
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db.js';
import { DEMO_WORKSPACE, findByTitle, listNotes, migrate } from '../src/notes.js';

const SEEDED = ['Kick-off', 'Weekly sync', 'Retro', 'Q1'];

async function bodiesOf(url: string) {
  const db = await openDatabase(url);
  try {
    await migrate(db, ['alice']);
    const listed = (await listNotes(db, DEMO_WORKSPACE)).map((n) => n.body.split(':')[0]);
    const meeting = (await findByTitle(db, DEMO_WORKSPACE, 'Meeting notes')).map(
      (n) => n.body.split(':')[0],
    );
    return { db, listed, meeting };
  } catch (e) {
    await db.close();
    throw e;
  }
}

describe('the seeded notes', () => {
  it('come in the order they were created, also when created_at ties', async () => {
    const { db, listed, meeting } = await bodiesOf('memory://');
    try {
      expect(listed).toEqual(SEEDED);
      expect(meeting).toEqual(SEEDED.slice(0, 3));
      // Two notes in the same microsecond, the later with the smaller id: the clock can tie.
      await db.query(
        `INSERT INTO notes (id, workspace_uri, title, body, created_at) VALUES
          ('note-zz', $1, 'Twins', 'first', '2026-12-01T00:00:00Z'),
          ('note-aa', $1, 'Twins', 'second', '2026-12-01T00:00:00Z')`,
        [DEMO_WORKSPACE],
      );
      const twins = await findByTitle(db, DEMO_WORKSPACE, 'Twins');
      expect(twins.map((n) => n.body)).toEqual(['first', 'second']);
    } finally {
      await db.close();
    }
  });

  it('get that order on a database made before notes had one', async () => {
    const { db } = await bodiesOf('memory://');
    try {
      // What the first schema left: no insertion order, no version 2.
      await db.query('ALTER TABLE notes DROP COLUMN seq');
      await db.query('DELETE FROM notes_schema WHERE version = 2');
      await migrate(db, ['alice']);
      await migrate(db, ['alice']); // a second start changes nothing
      const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM notes');
      expect(Number(rows[0]?.n)).toBe(4);
      const meeting = await findByTitle(db, DEMO_WORKSPACE, 'Meeting notes');
      expect(meeting.map((n) => n.body.split(':')[0])).toEqual(SEEDED.slice(0, 3));
    } finally {
      await db.close();
    }
  });
});
