/**
 * JsonLinesAuditSink on a file whose file system misbehaves under it: a line
 * cut short by a size limit (as a full disk cuts it) leaves no half record;
 * a file rotated or removed while the sink runs is opened anew at its path;
 * a FIFO nobody reads fails at once instead of blocking the process, and one
 * that is read takes records without the `fsync` a pipe cannot do.
 */
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GateAuditEvent } from '@mrtr/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { JsonLinesAuditSink } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-jsonl-faults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const event = (nonce: string) =>
  ({
    outcome: 'asked',
    principal: 'alice',
    method: 'tools/call',
    name: 'notes_delete',
    operation: 'tools/call:notes_delete',
    arguments: { title: 'Meeting notes' },
    argumentsDigest: 'sha256:abc',
    phase: 'confirm',
    key: 'delete_choice',
    nonce,
    question: 'Delete "Meeting notes"?',
    receivedAt: 1_800_000_000_000,
    at: 1_800_000_000_005,
  }) as GateAuditEvent;

/** The nonces of the records in `file`; throws if any line is not a whole JSON record. */
function nonces(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (text === '') return [];
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => (JSON.parse(line) as { nonce: string }).nonce);
}

/** This process's file-size limit (RLIMIT_FSIZE, soft) set to `soft` bytes, or lifted. */
const fileSizeLimit = (soft: number | 'unlimited') =>
  execFileSync('prlimit', ['--pid', String(process.pid), `--fsize=${soft}:unlimited`]);

describe('JsonLinesAuditSink when the file system refuses', () => {
  it('a line cut short (EFBIG here, ENOSPC alike) is cut back off the file: every line stays a whole record', async () => {
    const file = join(dir, 'limited.jsonl');
    const sink = new JsonLinesAuditSink({ destination: file });
    await sink.write(event('n1'));
    const size = statSync(file).size;
    // Room for part of the next line only: the write stops half way.
    fileSizeLimit(size + 100);
    let refused: unknown;
    try {
      refused = await sink.write(event('n2')).catch((error: unknown) => error);
    } finally {
      fileSizeLimit('unlimited');
    }
    expect((refused as NodeJS.ErrnoException).code).toBe('EFBIG');
    expect(statSync(file).size).toBe(size);
    // Once there is room again, the next record starts on its own line.
    await sink.write(event('n3'));
    await sink.close();
    expect(nonces(file)).toEqual(['n1', 'n3']);
  });

  it('a file renamed away (log rotation) or removed: the next record goes to a new file at the path', async () => {
    const file = join(dir, 'rotated.jsonl');
    const sink = new JsonLinesAuditSink({ destination: file });
    await sink.write(event('n1'));
    renameSync(file, `${file}.1`);
    await sink.write(event('n2'));
    expect(nonces(`${file}.1`)).toEqual(['n1']);
    expect(nonces(file)).toEqual(['n2']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    unlinkSync(file);
    await sink.write(event('n3'));
    await sink.close();
    expect(nonces(file)).toEqual(['n3']);
  });

  it('a FIFO that no process reads: fails at construction (ENXIO), never blocks the process', () => {
    const fifo = join(dir, 'unread.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(() => new JsonLinesAuditSink({ destination: fifo })).toThrow(/ENXIO/);
  });

  it('a FIFO that is read takes each record (no fsync, which a pipe cannot do)', async () => {
    const fifo = join(dir, 'read.fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const sink = new JsonLinesAuditSink({ destination: fifo }); // fsync on by default
      await sink.write(event('n1'));
      await sink.write(event('n2'));
      await sink.close();
      const buffer = Buffer.alloc(64 * 1024);
      const read = readSync(reader, buffer);
      const lines = buffer.subarray(0, read).toString('utf8').trimEnd().split('\n');
      expect(lines.map((l) => (JSON.parse(l) as { nonce: string }).nonce)).toEqual(['n1', 'n2']);
    } finally {
      closeSync(reader);
    }
    expect(existsSync(fifo)).toBe(true);
  });
});
