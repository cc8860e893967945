import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GateAuditEvent } from '@mrtr/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { AUDIT_LINE_MESSAGE, JsonLinesAuditSink } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-jsonl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const event = (outcome: GateAuditEvent['outcome'], extra: Partial<GateAuditEvent> = {}) =>
  ({
    outcome,
    principal: 'alice',
    method: 'tools/call',
    name: 'notes_delete',
    operation: 'tools/call:notes_delete',
    arguments: { title: 'Meeting notes', workspaceUri: 'notes://team' },
    argumentsDigest: 'sha256:abc',
    phase: 'confirm',
    key: 'delete_choice',
    nonce: 'n1',
    question: 'Delete "Meeting notes"?\nThis cannot be undone.',
    receivedAt: 1_800_000_000_000,
    at: 1_800_000_000_005,
    ...extra,
  }) as GateAuditEvent;

describe('JsonLinesAuditSink', () => {
  it('refuses every record after close(): nothing reaches the file that takes its descriptor', async () => {
    const sink = new JsonLinesAuditSink({ destination: join(dir, 'closed.jsonl') });
    await sink.write(event('asked'));
    await sink.close();
    // The next file opened takes the lowest free descriptor: the one the sink held.
    const unrelated = join(dir, 'unrelated.txt');
    const fd = openSync(unrelated, 'w');
    try {
      await expect(sink.write(event('completed', { nonce: 'late' }))).rejects.toThrow(/closed/);
      // Closing again leaves the descriptor, now the other file's, open.
      await sink.close();
      await new Promise((resolve) => setTimeout(resolve, 20));
      writeSync(fd, 'still open');
      expect(readFileSync(unrelated, 'utf8')).toBe('still open');
      expect(readFileSync(join(dir, 'closed.jsonl'), 'utf8')).not.toContain('late');
    } finally {
      closeSync(fd);
    }
  });

  it('appends one JSON object per record to a file it creates (with its directory, mode 0600)', async () => {
    const file = join(dir, 'nested', 'audit.jsonl');
    const sink = new JsonLinesAuditSink({ destination: file });
    await sink.write(event('asked'));
    await sink.write(event('declined', { answer: { action: 'decline' } }));
    await sink.close();
    // A second sink on the same file appends: records of earlier runs stay.
    const again = new JsonLinesAuditSink({ destination: file, base: { service: 'notes' } });
    again.write(event('asked', { nonce: 'n2' }));
    await again.close(); // waits for the line handed over
    const text = readFileSync(file, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      level: 'info',
      pid: process.pid,
      outcome: 'asked',
      question: 'Delete "Meeting notes"?\nThis cannot be undone.',
      arguments: { title: 'Meeting notes', workspaceUri: 'notes://team' },
      msg: AUDIT_LINE_MESSAGE,
    });
    expect(new Date(lines[0].time).toISOString()).toBe(lines[0].time);
    expect(lines[1]).toMatchObject({ outcome: 'declined', answer: { action: 'decline' } });
    expect(lines[2]).toMatchObject({ service: 'notes', nonce: 'n2' });
    expect(lines[2].pid).toBeUndefined();
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('rejects when the line cannot be written (a full device), instead of buffering it for later', async () => {
    if (!existsSync('/dev/full')) return expect.fail('this test needs /dev/full (Linux)');
    const sink = new JsonLinesAuditSink({ destination: '/dev/full', fsync: false });
    await expect(sink.write(event('accepted'))).rejects.toThrow(/ENOSPC/);
    // Nothing is queued: the next write fails on its own line again, not on a backlog.
    await expect(sink.write(event('failed'))).rejects.toThrow(/ENOSPC/);
    await sink.close();
  });

  it('fails at construction when the file cannot be opened', () => {
    expect(() => new JsonLinesAuditSink({ destination: dir })).toThrow(/EISDIR/);
  });

  it('hands whole lines to a given destination', async () => {
    const lines: string[] = [];
    const sink = new JsonLinesAuditSink({
      destination: { write: (l) => lines.push(l) },
      base: null,
    });
    await sink.write(event('completed', { isError: false }));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith('\n')).toBe(true);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ outcome: 'completed', isError: false });
  });

  it('fails the record when a given destination throws or rejects', async () => {
    const throwing = new JsonLinesAuditSink({
      destination: {
        write: () => {
          throw new Error('disk gone');
        },
      },
    });
    await expect(throwing.write(event('accepted'))).rejects.toThrow('disk gone');
    const rejecting = new JsonLinesAuditSink({
      destination: { write: async () => Promise.reject(new Error('bucket gone')) },
    });
    await expect(rejecting.write(event('accepted'))).rejects.toThrow('bucket gone');
  });

  it('refuses a timeoutMs that is not a positive number', () => {
    expect(() => new JsonLinesAuditSink({ timeoutMs: 0 })).toThrow(RangeError);
    // Past 2^31 − 1 ms Node's timers fire at once: every line would count as late.
    expect(() => new JsonLinesAuditSink({ timeoutMs: 2 ** 31 })).toThrow(RangeError);
    expect(() => new JsonLinesAuditSink({ timeoutMs: Infinity })).toThrow(RangeError);
  });
});

describe('JsonLinesAuditSink options (helper-163 L16)', () => {
  it('refuses a maxPendingBytes that is no bound', () => {
    for (const bad of [Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY])
      expect(() => new JsonLinesAuditSink({ maxPendingBytes: bad }), String(bad)).toThrow(
        /maxPendingBytes must be a whole number of bytes/,
      );
    expect(() => new JsonLinesAuditSink({ maxPendingBytes: 0 })).not.toThrow();
  });
});
