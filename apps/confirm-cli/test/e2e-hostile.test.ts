/**
 * `mrtr` in a real terminal (tmux) against servers that try to take over the
 * screen or slip invisible characters into an answer: a default made of
 * escape sequences (window title, clear screen, a fake question), and
 * defaults, choices and titles with zero-width, bidi and separator
 * characters. Nothing the server chose reaches the terminal raw, and nothing
 * the person cannot see is pre-filled, so pressing Enter never sends it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { askingServer } from './servers.js';
import { TmuxSession, tmuxAvailable } from './tmux.js';

const MAIN = join(import.meta.dirname, '../dist/main.js');
const hasTmux = tmuxAvailable();
const sessions: TmuxSession[] = [];

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`build mrtr first: ${MAIN} is missing`);
});
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});

function mrtr(args: string[]): TmuxSession {
  const session = new TmuxSession(
    [process.execPath, MAIN, ...args],
    { MRTR_TOKEN: 'unused', NO_COLOR: '1' },
    { recordRaw: true },
  );
  sessions.push(session);
  return session;
}
/** An open (active) prompt: clack marks it ◆ (or * without Unicode); answered ones turn ◇. */
const active = (title: string) => new RegExp(`[◆*]  ${title.replace(/[?]/g, '\\?')}`);

const ESC = '\u001b';
/** The tester's payload: set the window title, clear the screen, paint a fake question, turn red. */
const TAKEOVER = `${ESC}]0;PWNED-TITLE\u0007${ESC}[2J${ESC}[HFAKE-SCREEN${ESC}[31m`;

describe.skipIf(!hasTmux)('mrtr against a hostile server', () => {
  it('does not pre-fill a default made of escape sequences, and never writes them raw', async () => {
    const s = await askingServer({
      message: 'Delete thing?',
      requestedSchema: {
        type: 'object',
        properties: { name: { type: 'string', title: 'Type the name', default: TAKEOVER } },
        required: ['name'],
      },
    });
    try {
      const t = mrtr(['call', s.url, 'ask']);
      await t.waitFor(active('What would you like to do?'));
      t.keys(['Enter']); // Answer
      let screen = await t.waitFor(active('Type the name'));
      // Shown escaped, as a note; the prompt itself starts empty.
      expect(screen).toContain(
        `"\\u{1b}]0;PWNED-TITLE\\u{7}\\u{1b}[2J\\u{1b}[HFAKE-SCREEN\\u{1b}[31m". Answer it yourself.`,
      );
      t.keys(['Enter']); // nothing typed: nothing is sent
      await t.waitFor(/is required/);
      t.keys(['bob'], true);
      t.keys(['Enter']);
      screen = await t.waitFor(active('Send these answers?'));
      expect(screen).toContain('Type the name: bob');
      t.keys(['Enter']); // Send
      screen = await t.waitFor(/\[mrtr exited \d+\]/);
      expect(screen).toContain('got {"q":{"action":"accept","content":{"name":"bob"}}} with st');

      // What reached the terminal: the payload only as visible text, none of its bytes.
      const raw = t.raw().toString('utf8');
      expect(raw).toContain('Type the name');
      expect(raw).not.toContain('\u0007');
      expect(raw).not.toContain(`${ESC}]`);
      expect(raw).not.toContain(`${ESC}[2J`);
      expect(raw).not.toContain(`${ESC}[H`);
      expect(raw).not.toContain(`${ESC}[31m`);
      for (const at of raw.matchAll(/FAKE-SCREEN/g))
        expect(raw.slice((at.index as number) - 8, at.index)).toBe('\\u{1b}[H');
    } finally {
      await s.close();
    }
  });

  it('pre-fills and pre-selects nothing with invisible characters, and shows them escaped', async () => {
    const s = await askingServer({
      message: 'Confirm\u2028the\u2029transfer.',
      requestedSchema: {
        type: 'object',
        properties: {
          file: { type: 'string', title: 'File\u200B name', default: 'report\u202Etxt.exe' },
          note: { type: 'string', title: 'Note', default: 'ok\u200B' },
          plan: {
            type: 'string',
            title: 'Plan',
            enum: ['basic', 'pro\u2060'],
            default: 'pro\u2060',
          },
          tags: {
            type: 'array',
            title: 'Tags',
            items: { type: 'string', enum: ['red', 'blue\uFEFF'] },
            default: ['blue\uFEFF'],
          },
        },
        required: ['file', 'plan'],
      },
    });
    try {
      const t = mrtr(['call', s.url, 'ask']);
      let screen = await t.waitFor(active('What would you like to do?'));
      expect(screen).toContain('Confirm\\u{2028}the\\u{2029}transfer.');
      t.keys(['Enter']); // Answer
      screen = await t.waitFor(active('File\\\\u\\{200b\\} name'));
      expect(screen).toContain('"report\\u{202e}txt.exe". Answer it yourself.');
      t.keys(['a.txt'], true);
      t.keys(['Enter']);
      screen = await t.waitFor(active('Note'));
      expect(screen).toContain('"ok\\u{200b}". Answer it yourself.');
      t.keys(['Enter']); // optional and empty: no answer
      screen = await t.waitFor(active('Plan'));
      expect(screen).toContain('"pro\\u{2060}". Answer it yourself.');
      expect(screen).toContain('pro\\u{2060}');
      t.keys(['Enter']); // the cursor is on the first choice, not on the default
      screen = await t.waitFor(active('Tags'));
      expect(screen).toContain('"blue\\u{feff}". Answer it yourself.');
      t.keys(['Enter']); // nothing pre-selected: an empty list
      screen = await t.waitFor(active('Send these answers?'));
      expect(screen).toContain('File\\u{200b} name: a.txt');
      expect(screen).toContain('Note: (no answer)');
      expect(screen).toContain('Plan: basic');
      expect(screen).toContain('Tags: (none)');
      t.keys(['Enter']); // Send
      screen = await t.waitFor(/\[mrtr exited \d+\]/);
      expect(screen).toContain(
        'got {"q":{"action":"accept","content":{"file":"a.txt","plan":"basic","tags":[]}}} with st',
      );

      const raw = t.raw().toString('utf8');
      for (const c of ['\u2028', '\u2029', '\u200B', '\u202E', '\u2060', '\uFEFF'])
        expect(raw, `U+${c.codePointAt(0)?.toString(16)}`).not.toContain(c);
    } finally {
      await s.close();
    }
  });

  // helper-155 L1, helper-157 L3: clack's answered line joined one choice "a.txt, b.txt" like two.
  it('quotes every choice of a multi-select when one may hold a comma, on the answered line too', async () => {
    const s = await askingServer({
      message: 'Delete files?',
      requestedSchema: {
        type: 'object',
        properties: {
          files: {
            type: 'array',
            title: 'Files',
            items: { type: 'string', enum: ['a.txt', 'b.txt', 'a.txt, b.txt'] },
          },
        },
      },
    });
    try {
      const t = mrtr(['call', s.url, 'ask']);
      await t.waitFor(active('What would you like to do?'));
      t.keys(['Enter']); // Answer
      await t.waitFor(active('Files'));
      t.keys(['Down', 'Down', 'Space', 'Enter']);
      const screen = await t.waitFor(active('Send these answers?'));
      expect(screen).toMatch(/│ {2}"a\.txt, b\.txt"\n/);
      expect(screen).toContain('Files: "a.txt, b.txt"');
    } finally {
      await s.close();
    }
  });

  // helper-153 #2, helper-155 L3: a blank title drew a field with no label and "yes" pre-selected.
  it('labels a field whose title shows nothing by its name, on the prompt and in the review', async () => {
    const s = await askingServer({
      message: 'Keep your files?',
      requestedSchema: {
        type: 'object',
        properties: {
          delete_all_files: { type: 'boolean', title: ' \u0301', default: true },
          keep: { type: 'boolean', title: 'Keep backups' },
        },
      },
    });
    try {
      const t = mrtr(['call', s.url, 'ask']);
      await t.waitFor(active('What would you like to do?'));
      t.keys(['Enter']); // Answer
      await t.waitFor(active('delete_all_files'));
      t.keys(['Enter']);
      await t.waitFor(active('Keep backups'));
      t.keys(['Enter']);
      const screen = await t.waitFor(active('Send these answers?'));
      expect(screen).toContain('delete_all_files: yes');
    } finally {
      await s.close();
    }
  });

  it('does not pre-fill a default with private-use characters, and shows them as codes', async () => {
    const s = await askingServer({
      message: 'Type the name to confirm',
      requestedSchema: {
        type: 'object',
        properties: { name: { type: 'string', title: 'Name', default: 'prod\uE000\u{F0000}-db' } },
        required: ['name'],
      },
    });
    try {
      const t = mrtr(['call', s.url, 'ask']);
      await t.waitFor(active('What would you like to do?'));
      t.keys(['Enter']); // Answer
      let screen = await t.waitFor(active('Name'));
      expect(screen).toContain('"prod\\u{e000}\\u{f0000}-db". Answer it yourself.');
      t.keys(['Enter']); // nothing pre-filled: Enter on the empty field is refused
      screen = await t.waitFor(/is required/);
      t.keys(['prod-db'], true);
      t.keys(['Enter']);
      screen = await t.waitFor(active('Send these answers?'));
      expect(screen).toContain('Name: prod-db');
      t.keys(['Enter']); // Send
      screen = await t.waitFor(/\[mrtr exited \d+\]/);
      expect(screen).toContain(
        'got {"q":{"action":"accept","content":{"name":"prod-db"}}} with st',
      );
      const raw = t.raw().toString('utf8');
      expect(raw).not.toContain('\uE000');
      expect(raw).not.toContain('\u{F0000}');
    } finally {
      await s.close();
    }
  });
});
