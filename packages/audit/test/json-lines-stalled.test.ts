/**
 * JsonLinesAuditSink on a destination nobody reads: a FIFO whose read end is
 * held open and never read, written as a stream (what `process.stdout` is on
 * a pipe) and as a file path. Records fail closed after `timeoutMs`, or at
 * once past `maxPendingBytes`, and the event loop runs all the while (a timer
 * keeps ticking); nothing waits without bound.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GateAuditEvent } from '@mrtr/gate';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditDestinationBusyError, JsonLinesAuditSink } from '../src/index.js';
import { fileLines } from '../src/line-writers.js';

const dir = mkdtempSync(join(tmpdir(), 'mrtr-jsonl-stalled-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fifos = 0;
/** A FIFO with a reader that never reads (opened non-blocking, so opening does not wait). */
function unreadFifo() {
  const path = join(dir, `fifo-${fifos++}`);
  execFileSync('mkfifo', [path]);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  return { path, close: () => closeSync(reader) };
}

/** A record of about 1 KiB. */
const record = (n: number) =>
  ({
    outcome: 'asked',
    principal: 'alice',
    method: 'tools/call',
    name: 'notes_delete',
    operation: 'tools/call:notes_delete',
    arguments: { n },
    argumentsDigest: 'sha256:abc',
    phase: 'confirm',
    key: 'delete_choice',
    question: 'q'.repeat(1000),
    receivedAt: 1_800_000_000_000,
    at: 1_800_000_000_005,
  }) as GateAuditEvent;

/** Write records until one fails; how many were taken, the failure, and the timer ticks seen while it waited. */
async function fillUntilRefused(sink: JsonLinesAuditSink) {
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 5);
  try {
    for (let taken = 0; taken < 10_000; taken++) {
      const before = ticks;
      const error = await sink.write(record(taken)).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (error) return { taken, error, ticksWhileWaiting: ticks - before };
    }
    throw new Error('the destination took 10 000 records: it is not stalled');
  } finally {
    clearInterval(ticker);
  }
}

describe('JsonLinesAuditSink on a destination nobody reads', () => {
  it('a pipe written as a stream: a record waits timeoutMs then fails; past maxPendingBytes records fail at once', async () => {
    const fifo = unreadFifo();
    const pipe = new Socket({
      fd: openSync(fifo.path, constants.O_WRONLY | constants.O_NONBLOCK),
      readable: false,
      writable: true,
    });
    const sink = new JsonLinesAuditSink({
      destination: pipe,
      timeoutMs: 200,
      maxPendingBytes: 16 * 1024,
    });
    try {
      const full = await fillUntilRefused(sink);
      expect(full.taken).toBeGreaterThan(10); // the pipe's own buffer took the first ones
      expect(full.error).toBeInstanceOf(AuditDestinationBusyError);
      expect(String(full.error)).toMatch(/took no line for 200 ms/);
      expect(full.ticksWhileWaiting).toBeGreaterThan(0); // the event loop was not blocked

      // Many at once: those past the limit fail first, without waiting for the timeout.
      const settled: string[] = [];
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          sink.write(record(i)).then(
            () => settled.push('taken'),
            (e: Error) => settled.push(e.message),
          ),
        ),
      );
      expect(settled).not.toContain('taken');
      expect(settled[0]).toMatch(/bytes are still waiting \(limit 16384\)/);
      expect(settled.filter((m) => /took no line/.test(m)).length).toBeGreaterThan(0);
      expect(settled.filter((m) => /still waiting/.test(m)).length).toBeGreaterThan(20);
    } finally {
      pipe.destroy();
      fifo.close();
    }
  });

  it('a pipe behind a file path: the write waits on the thread pool, the record fails after timeoutMs', async () => {
    const fifo = unreadFifo();
    const sink = new JsonLinesAuditSink({ destination: fifo.path, fsync: false, timeoutMs: 200 });
    try {
      const full = await fillUntilRefused(sink);
      expect(full.taken).toBeGreaterThan(10);
      expect(full.error).toBeInstanceOf(AuditDestinationBusyError);
      expect(full.ticksWhileWaiting).toBeGreaterThan(0);
    } finally {
      fifo.close(); // the blocked write ends with EPIPE
      await sink.close();
    }
  });

  it('a full pipe behind a file path fails as busy on its own deadline too, not with a bare EAGAIN', async () => {
    // What a loaded event loop shows: the retry loop's deadline passes before the sink's timer fires.
    const fifo = unreadFifo();
    const lines = fileLines(fifo.path, false, 50);
    try {
      let error: unknown;
      for (let n = 0; n < 10_000 && error === undefined; n++)
        error = await lines.send(`${'x'.repeat(1023)}\n`).then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(AuditDestinationBusyError);
      expect(String(error)).toMatch(/took no line for 50 ms/);
      expect((error as Error).cause).toMatchObject({ code: 'EAGAIN' });
    } finally {
      fifo.close();
      lines.close();
    }
  });
});
