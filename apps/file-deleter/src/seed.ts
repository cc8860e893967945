import { promises as fsp } from 'node:fs';
import { join } from 'node:path';

/** Where the demo folder lives when `FILES_ROOT` is unset (relative to the working directory). */
export const DEFAULT_FILES_ROOT = './.data/files';

const NOTES = `Meeting notes, 5 October 2026

Attendees: Ana, Bo, Chen, Dee.

1. Release 4.2: the migration of the billing tables slipped a week. Bo owns
   the rollback plan; Chen reviews it by Thursday.
2. On-call: the pager rota moves to a two-week cycle from November.
3. Budget: travel for the spring conference is approved for two people.

Action items
- Ana: write the customer notice for the billing change.
- Bo: rollback plan, dry run on staging.
- Chen: review the plan; update the runbook.
- Dee: book the venue for the offsite.

`;

/** The demo files: `notes.txt` (about 2.3 KB, modified 2026-10-05 14:30 UTC) and a few others. */
const FILES: { path: string; text: string; modified?: string }[] = [
  { path: 'notes.txt', text: NOTES.repeat(5).slice(0, 2345), modified: '2026-10-05T14:30:00Z' },
  { path: 'todo.md', text: '- [ ] renew the certificate\n- [x] rotate the keys\n' },
  { path: 'reports/q3-summary.csv', text: 'month,revenue\njul,120\naug,135\nsep,128\n' },
  { path: 'drafts/letter.txt', text: 'Dear team,\n\nthank you for a good quarter.\n' },
];

/**
 * Create the demo folder `dir` with its files, unless it exists already
 * (its files are then the person's, and left alone).
 * @returns whether it was created.
 */
export async function seedDemoFiles(dir: string): Promise<boolean> {
  const made = await fsp.mkdir(dir, { recursive: true }).then((first) => first !== undefined);
  if (!made) return false;
  for (const file of FILES) {
    const path = join(dir, file.path);
    await fsp.mkdir(join(path, '..'), { recursive: true });
    await fsp.writeFile(path, file.text, { flag: 'wx' });
    if (file.modified) await fsp.utimes(path, new Date(file.modified), new Date(file.modified));
  }
  return true;
}
